"""The one function that builds what a provider embeds; fingerprints hash the same text.

An embedding model reads only the start of a text (the bundled all-MiniLM-L6-v2: 128 word
pieces, see minilm/NOTICE.md), and mean pooling lets every token it reads pull on the vector. So the
embedded text leads with what the chunk is about: its heading path, then its prose and tables,
and its code blocks last. An SDK method's description then fills the vector instead of the
boilerplate of its usage example; the code still counts in full-text search, and in the vector
wherever the prose leaves room. Measured on every shipped suite (docs/decisions/0003-embedding-input-prose-first-128-word-pieces.md).
"""

from __future__ import annotations

import hashlib
import re
import weakref
from array import array
from pathlib import Path
from typing import Any

from ..output.chunk import Chunk
from ..output.derived_fields import table_share
from . import hooks
from .base import EmbeddingProvider

_FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})")


def code_blocks(markdown: str) -> list[str]:
    """The bodies of the fenced code blocks in a chunk's Markdown, as its content_text holds them."""
    blocks: list[str] = []
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        i += 1
        if not opening:
            continue
        indent, fence = len(opening.group(1)), opening.group(2)
        body: list[str] = []
        while i < len(lines) and not lines[i].lstrip().startswith(fence):
            line = lines[i]
            body.append(line[min(indent, len(line) - len(line.lstrip())) :])  # the fence's indent, as a list item has
            i += 1
        i += 1
        blocks.append("\n".join(body).strip("\n"))
    return [b for b in blocks if b.strip()]


def heading_path(chunk: Chunk) -> str:
    """The breadcrumb without its file path ("Links > createMany"); the path when there are no headings."""
    return chunk.breadcrumb.removeprefix(chunk.filepath + " > ")


def to_embedding_input(chunk: Chunk) -> str:
    """Heading path, the chunk's text with its code blocks cut out, then those code blocks."""
    return "\n\n".join(part for part in embedding_parts(chunk) if part)


TABLE_SHARE = 0.5  # a chunk with more of its Markdown in table rows than this gets no passages


def passage_input(chunk: Chunk) -> tuple[str, str, int]:
    """(to_embedding_input, heading path, how far passages may reach in it): what PassageSplitter cuts.

    Passages reach to where the code blocks start, and not at all in a chunk that is mostly a
    table: a window of a field table's rows mixes many unrelated fields and matched queries about
    any of them (docs/decisions/0011-passages-for-long-chunks.md).
    """
    head, text, *code = embedding_parts(chunk)
    prose = "\n\n".join(part for part in [head, text] if part)
    full = "\n\n".join(part for part in [prose, *code] if part)
    return full, head, 0 if table_share(chunk.content) > TABLE_SHARE else len(prose)


def embedding_parts(chunk: Chunk) -> list[str]:
    """[heading path, text without its code blocks, *code blocks] (any may be empty)."""
    text = chunk.content_text
    moved = []
    for block in code_blocks(chunk.content):
        at = text.find(block)
        if at >= 0:  # a block content_text holds differently stays where it is
            text = text[:at] + text[at + len(block) :]
            moved.append(block)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return [heading_path(chunk), text, *moved]


PASSAGES = 2  # vectors per chunk at most: the first window, then one more (docs/ranking.md, "What the vector sees")
MEMO_ENTRIES = 200_000  # inputs whose windows a splitter remembers: a bound on its memory


class PassageSplitter:
    """Cuts an embedding input into the windows a model reads: passages of one chunk.

    The first passage is the input itself (the model reads its first `max_tokens` word pieces,
    as it always did); each further one is the heading path followed by the next window of word
    pieces up to `end`, where the code blocks start: prose past the first window then reaches a
    vector, code boilerplate does not (a window of it matched unrelated queries;
    docs/decisions/0011-passages-for-long-chunks.md). A chunk whose input fits one window, or with
    `end` 0 (passage_input), has one passage. Tokenizes one text at a time (no tokenizer thread pool
    to fork). One per provider (splitter_for), from what the provider declares: its passage_window.
    """

    def __init__(self, tokenizer_file: Path, max_tokens: int, limit: int = PASSAGES) -> None:
        self.tokenizer_file = tokenizer_file
        # Inputs of at most this many characters fit one window (a word piece covers at least one
        # character, and [CLS] and [SEP] take two places); fixed, so passages never depend on whether
        # the tokenizer happened to be loaded.
        self.short = max(1, max_tokens - 2)
        self.room = self.short  # word pieces of text one window holds, exactly once loaded
        self.max_tokens = max_tokens
        self.limit = limit
        self._tokenizer: Any = None
        # A build asks twice (fingerprints, then the texts to embed): the second time costs a hash, not a tokenization.
        self._spans: dict[bytes, tuple[tuple[int, int], ...]] = {}
        # The first window's word pieces (no special tokens) of the inputs tokenized here, for a provider
        # that would tokenize them again to embed them (OnnxProvider.embedding_order takes them out).
        self.first_windows: dict[str, array[int]] = {}  # ~0.5 KB each; emptied by each embedding_order

    def _load(self) -> Any:
        """The tokenizer, loaded for the first input that may not fit one window: a build of short
        chunks (and a no-op rebuild of them) never imports `tokenizers`."""
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(self.tokenizer_file))
            tokenizer.no_truncation()
            tokenizer.no_padding()
            self.room = max(1, self.max_tokens - len(tokenizer.encode("", add_special_tokens=True).ids))
            self._tokenizer = tokenizer
        return self._tokenizer

    def __call__(self, text: str, heading: str, end: int | None = None) -> list[str]:
        if self.limit <= 1 or len(text) <= self.short or end == 0:
            return [text]
        head = f"{heading}\n\n" if heading else ""
        key = hashlib.blake2b(f"{end}\0{head}\0{text}".encode(), digest_size=16).digest()
        spans = self._spans.get(key)
        if spans is None:
            spans = self._windows(text, head, end)
            if len(self._spans) >= MEMO_ENTRIES:
                self._spans.clear()
            self._spans[key] = spans
        return [text, *(head + text[a:b] for a, b in spans)]

    def _windows(self, text: str, head: str, end: int | None) -> tuple[tuple[int, int], ...]:
        """Character spans of `text` that the passages after the first hold."""
        tokenizer = self._load()
        encoding = tokenizer.encode(text, add_special_tokens=False)
        if len(self.first_windows) < MEMO_ENTRIES:
            self.first_windows[text] = array("i", encoding.ids[: self.room])
        offsets, words = encoding.offsets, encoding.word_ids
        if len(offsets) <= self.room:
            return ()
        if end is not None:  # later windows cover the prose and tables, not the code blocks after them
            offsets = [o for o in offsets if o[1] <= end]
            words = words[: len(offsets)]
        take = max(16, self.room - len(tokenizer.encode(head, add_special_tokens=False).ids))
        spans: list[tuple[int, int]] = []
        start = self.room
        while len(spans) + 1 < self.limit and start < len(offsets):
            while start > 0 and words[start] is not None and words[start] == words[start - 1]:
                start -= 1  # a window starts at a whole word, not in its last word pieces
            stop = min(len(offsets), start + take)
            spans.append((offsets[start][0], offsets[stop - 1][1]))
            start = stop
        return tuple(spans)


_SPLITTERS: weakref.WeakKeyDictionary[EmbeddingProvider, PassageSplitter | None] = weakref.WeakKeyDictionary()


def splitter_for(provider: EmbeddingProvider) -> PassageSplitter | None:
    """The provider's passage splitter (None: one vector per chunk), made once from its passage_window:
    from the tokenizer file only, never the model, so a no-op build's fingerprints stay cheap."""
    try:
        return _SPLITTERS[provider]
    except KeyError:
        pass
    except TypeError:  # a provider that cannot be a weak key: a splitter per call, without its memo
        return _splitter(provider)
    splitter = _SPLITTERS[provider] = _splitter(provider)
    return splitter


def known_splitter(provider: EmbeddingProvider) -> PassageSplitter | None:
    """The splitter splitter_for made for this provider, if it made one (its first windows, for embedding)."""
    try:
        return _SPLITTERS.get(provider)
    except TypeError:
        return None


def _splitter(provider: EmbeddingProvider) -> PassageSplitter | None:
    window = hooks.passage_window(provider)
    return PassageSplitter(*window) if window else None


def passages(provider: EmbeddingProvider, text: str, heading: str, end: int | None = None) -> list[str]:
    """The texts embedded for one chunk's input (`heading`: its heading path; `end`: where its code blocks
    start): the input itself, then, for a model that reads only a window of word pieces, the heading path
    with each next window (PassageSplitter)."""
    splitter = splitter_for(provider)
    return splitter(text, heading, end) if splitter else [text]


def multivector(provider: EmbeddingProvider) -> bool:
    """Whether chunks can have more than one passage (the table then stores a list of vectors per row)."""
    return splitter_for(provider) is not None
