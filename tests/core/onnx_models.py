"""Model folders for the onnx backend's tests: the bundled model under another name, and an fp32 one."""

from __future__ import annotations

import shutil
from pathlib import Path

from docs_mcp_core.embedding.local_onnx import BUNDLED_DIR, OnnxProvider
from docs_mcp_core.embedding.onnx_graphs import GRAPH_FILES, optimized_graph


def int8_model_folder(folder: Path) -> Path:
    """The bundled int8 model as a custom model folder (not recognized by name)."""
    shutil.copytree(BUNDLED_DIR, folder)
    shutil.copy(OnnxProvider().onnx_path, folder / "model.onnx")
    return folder


def fp32_model_folder(folder: Path) -> Path:
    """The bundled model with its weights folded to fp32 (ONNX Runtime's saved graph): a model with no
    int8 weights, as most exports are."""
    import onnxruntime as ort

    source = OnnxProvider()
    graph = optimized_graph(ort, source.onnx_path, source.onnx_sha256, folder.parent / f"{folder.name}-graphs")
    assert graph is not None
    shutil.copytree(BUNDLED_DIR, folder)
    for name in GRAPH_FILES:
        shutil.copy(graph.parent / name, folder / name)
    return folder
