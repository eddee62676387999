"""`import lancedb` in docs-mcp's own processes defers the namespace client's `__init__` and validators; both
still work. `import docs_mcp_core` alone changes nothing in the importing process."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys

import pytest

from docs_mcp_core.lazy_imports import deferred_validate_call

# Run in a fresh interpreter: this test process has imported lancedb long ago.
PROBE = """
import json, sys
import pydantic
real = pydantic.validate_call
from docs_mcp_core.process import own_process
own_process()  # what the console script (cli.entry) and the parse workers do first
import lancedb
init_ran = "lance_namespace_urllib3_client.api" in sys.modules
import lance_namespace_urllib3_client as client
TableApi = client.TableApi  # the package's own name: its __init__ runs now
method = TableApi.describe_table
out = {"init_ran": init_ran, "version": client.__version__,
       "deferred": method.__code__.co_filename.endswith("lazy_imports.py"),
       "restored": pydantic.validate_call is real, "name": method.__name__}
try:
    TableApi(api_client=object()).describe_table(id=5, describe_table_request=None)
except pydantic.ValidationError as exc:
    out["errors"] = sorted(e["loc"][0] for e in exc.errors())
print(json.dumps(out))
"""


@pytest.mark.slow
def test_lancedb_imported_in_a_docs_mcp_process_defers_the_namespace_client_which_still_works() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert not found["init_ran"], "import lancedb ran the namespace client's __init__ (its API modules)"
    assert found["version"].count(".") == 2  # set by the real __init__ on first access
    assert found["deferred"], "the namespace client's methods were built with eager validators"
    assert found["restored"], "pydantic.validate_call was left patched after the import"
    assert found["name"] == "describe_table"
    assert found["errors"] == ["describe_table_request", "id"]  # pydantic's own checks, run on the call


# A host process: it imports the library and every package the server and CLI use, then lancedb.
HOST = """
import gc, json, os, sys
import docs_mcp_core, docs_mcp_core.cli, docs_mcp_core.search, docs_mcp_core.server, docs_mcp_core.embedding
import lancedb
print(json.dumps({"hooks": [type(f).__module__ for f in sys.meta_path if type(f).__module__.startswith("docs_mcp")],
                  "env": "LANCEDB_LOG" in os.environ, "frozen": gc.get_freeze_count(),
                  "init_ran": "lance_namespace_urllib3_client.api" in sys.modules}))
"""


@pytest.mark.slow
def test_importing_docs_mcp_core_leaves_the_host_process_as_it_was() -> None:
    env = {k: v for k, v in os.environ.items() if k != "LANCEDB_LOG"}
    done = subprocess.run([sys.executable, "-c", HOST], capture_output=True, text=True, check=True, env=env)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["hooks"] == [], "importing docs_mcp_core installed an import hook"
    assert not found["env"], "importing docs_mcp_core set LANCEDB_LOG"
    assert found["frozen"] == 0, "importing docs_mcp_core froze the garbage collector"
    assert found["init_ran"], "lancedb's namespace client was deferred in a process that did not ask for it"


def test_the_deferred_decorator_builds_the_real_validator_once_on_first_call() -> None:
    built: list[dict] = []

    def real(**options):
        built.append(options)
        return lambda func: lambda *args, **kwargs: ("validated", func(*args, **kwargs))

    deferred = deferred_validate_call(real)

    @deferred
    def bare(x: int) -> int:
        return x * 2

    @deferred(validate_return=True)
    def with_options(x: int) -> int:
        return x + 1

    assert built == [] and bare.__name__ == "bare"
    assert bare(2) == ("validated", 4) and bare(3) == ("validated", 6)
    assert with_options(1) == ("validated", 2)
    assert built == [{}, {"validate_return": True}]


@pytest.mark.parametrize("bad", [{"x": "not a number"}])
def test_deferred_validate_call_over_pydantic_rejects_what_pydantic_rejects(bad: dict) -> None:
    import pydantic

    @deferred_validate_call(pydantic.validate_call)
    def double(x: int) -> int:
        return x * 2

    assert double(x=4) == 8
    with pytest.raises(pydantic.ValidationError):
        double(**bad)


SERVER_PROBE = """
import json, sys
from docs_mcp_core.process import own_process
own_process()
import docs_mcp_core.server.app, mcp.server.stdio
loaded = sorted(m for m in ("mcp.client", "mcp.server.mcpserver", "httpx2") if m in sys.modules)
validators = "jsonschema" in sys.modules
from mcp import Client, StdioServerParameters
from mcp.server import MCPServer, Server
import mcp.types as types
print(json.dumps({"loaded": loaded, "validators": validators, "client": Client.__module__, "mcpserver": MCPServer.__module__,
                  "server": Server.__module__, "tool": types.Tool.__name__,
                  "params": StdioServerParameters(command="x").command}))
"""


def test_the_stdio_server_imports_no_mcp_client_nor_fastmcp_and_both_still_import() -> None:
    done = subprocess.run([sys.executable, "-c", SERVER_PROBE], capture_output=True, text=True, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["loaded"] == [], "the server's imports ran the mcp package __init__s (client, FastMCP)"
    assert not found["validators"], "the server imported jsonschema before a tools request needed a validator"
    assert found["client"] == "mcp.client.client" and found["mcpserver"].startswith("mcp.server.mcpserver")
    assert found["server"] == "mcp.server.lowlevel.server" and found["tool"] == "Tool" and found["params"] == "x"


INDEX_PROBE = """
import json, sys
from docs_mcp_core.process import own_process
own_process()
from docs_mcp_core.cli import served_corpora
served = served_corpora((sys.argv[1], "named=" + sys.argv[1]), None)
loaded = sorted(m for m in ("docs_mcp_core.sources.config", "docs_mcp_core.embedding.openai_api") if m in sys.modules)
readers = sorted(m for m in ("docs_mcp_core.versions.lockfiles", "docs_mcp_core.versions.pinning", "yaml") if m in sys.modules)
print(json.dumps({"loaded": loaded, "readers": readers, "names": [c.corpus_name for c in served]}))
"""


def test_serving_indexes_named_by_path_reads_no_config_and_imports_no_provider(tmp_path) -> None:
    """docs-mcp.yaml's model imports every built-in provider (the OpenAI one brings its HTTP client):
    `serve --index` never reads a config, so it must not pay for that. Nor, for an index without
    versions, for the lockfile readers (yaml, packaging) that pick a versioned corpus's version."""
    index = tmp_path / "index"
    index.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", INDEX_PROBE, str(index)], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["loaded"] == [], "serve --index imported the config model and every provider"
    assert found["readers"] == [], "serving an index without versions imported the lockfile readers"
    assert found["names"] == ["index", "named"]


LAUNCHER_PROBE = """
import json, sys
before = set(sys.modules)
from docs_mcp_core import console, shared_session
ours = sorted(m for m in set(sys.modules) - before if m.split(".")[0] not in sys.stdlib_module_names)
print(json.dumps(ours))
"""


def test_a_shared_sessions_launcher_imports_nothing_but_the_standard_library() -> None:
    """`docs-mcp serve --shared` starts in tens of milliseconds: no click, no MCP SDK, no docs-mcp command."""
    done = subprocess.run([sys.executable, "-c", LAUNCHER_PROBE], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == ["docs_mcp_core", "docs_mcp_core.console", "docs_mcp_core.shared_session"]


OWN = """
from docs_mcp_core.process import own_process
own_process()
"""
WIRE_PROBE = """
import json, sys
import docs_mcp_core.server.app, mcp.server.stdio
import pydantic
import mcp_types._v2025_11_25 as v2025, mcp_types._v2026_07_28 as v2026
from mcp_types import methods
from mcp_types._wire_base import WireModel

def built(module):
    return sorted(n for n, c in vars(module).items() if isinstance(c, type) and issubclass(c, WireModel)
                  and c.__module__ == module.__name__ and c.__pydantic_complete__)

def errors(call):
    try:
        call()
    except pydantic.ValidationError as exc:
        return [[list(map(str, e["loc"])), e["type"]] for e in exc.errors()]
    return None

at_import = {"v2025": len(built(v2025)), "v2026": len(built(v2026)), "config": dict(WireModel.model_config)}
v = "2025-11-25"
init = {"protocolVersion": v, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
out = {
    "at_import": at_import,
    "initialize": type(methods.parse_client_request("initialize", v, init)).__name__,
    "bad_call": errors(lambda: methods.parse_client_request("tools/call", v, {"arguments": {"q": 1}})),
    "bad_result": errors(lambda: methods.serialize_server_result("tools/call", v, {"content": [{"type": "x"}]})),
    "result": methods.serialize_server_result("tools/call", v, {"content": [{"type": "text", "text": "hi"}]}),
    "modern_bad": errors(lambda: v2026.CallToolRequest.model_validate({"method": "tools/call", "params": {}})),
    "schema": sorted(v2026.CallToolRequestParams.model_json_schema()["properties"]),
}
out["built"] = {"v2025": built(v2025), "v2026": built(v2026)}
print(json.dumps(out))
"""


def test_the_sdks_wire_models_build_on_first_use_with_the_same_checks() -> None:
    """A stdio server builds only the wire models its session validates (lazy_imports.py), and each checks
    what an eagerly built one checks: the same answers and validation errors as in a plain process."""
    done = subprocess.run([sys.executable, "-c", OWN + WIRE_PROBE], capture_output=True, text=True, check=True)
    own = json.loads(done.stdout.splitlines()[-1])
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):  # this process imported the SDK plainly: eager models
        exec(WIRE_PROBE, {"__name__": "plain"})  # the same probe, in this plain process
    plain = json.loads(printed.getvalue().splitlines()[-1])
    assert own["at_import"] == {"v2025": 0, "v2026": 0, "config": {"populate_by_name": True}}, (
        "serve's imports built the SDK's per-version wire models, or left the base's config changed"
    )
    used = own["built"]
    assert 0 < len(used["v2025"]) < 30 and len(used["v2026"]) < 10, used  # only what the calls needed
    assert "InitializeRequest" in used["v2025"] and "CallToolRequest" in used["v2026"]
    same = ("initialize", "bad_call", "bad_result", "result", "modern_bad", "schema")
    assert {k: own[k] for k in same} == {k: plain[k] for k in same}
    assert own["bad_call"] and own["bad_result"] and own["modern_bad"]  # pydantic's checks ran
