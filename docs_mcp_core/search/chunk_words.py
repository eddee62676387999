"""Which chunks hold each word of content_text, as LanceDB's full-text index keeps it: the exact-phrase
query is not sent when no chunk holds every word of the query, since it would find nothing.

Most questions an agent asks are not written anywhere word for word, so their exact-phrase query
comes back empty; it still costs about as much of LanceDB's time as the full-text query. A phrase
only matches a chunk that holds every word of the phrase the index keeps (its stem; stop words
and over-long tokens are dropped), so a query none of whose chunks holds all of them is answered
with an empty list at once. The check only ever says "cannot match" when that is certain: every
chunk word is kept in each form LanceDB's tokenizer could turn it into (lowercase, Porter2 stem,
ASCII-folded; repeats.stem is the same stemmer), a query with a character beyond ASCII is always
sent, and a query word that may be a stop word is not required.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from .proximity import STOP_WORDS, TOKEN
from .repeats import stem

# LanceDB drops tokens of this many bytes or more; a query word that long is not required.
LONG_TOKEN = 40
# Words no query needs a chunk to hold: LanceDB's stop words (proximity.STOP_WORDS) and, in case its
# list is longer, Snowball's English list, each also as its stem (LanceDB drops a token by its stem).
_SNOWBALL_STOP = """
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it
its itself they them their theirs themselves what which who whom this that these those am is are was were be been
being have has had having do does did doing would should could ought a an the and but if or because as until while
of at by for with about against between into through during before after above below to from up down in out on off
over under again further then once here there when where why how all any both each few more most other some such
no nor not only own same so than too very can will just don now cannot let
""".split()
_OPTIONAL = frozenset(STOP_WORDS) | frozenset(_SNOWBALL_STOP)
_OPTIONAL_STEMS = frozenset(stem(word) for word in _OPTIONAL)
# Latin letters that Unicode does not decompose but an ASCII folding filter spells in ASCII.
_FOLD = str.maketrans({"ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ð": "d", "ł": "l", "þ": "th", "ı": "i"})
# Chunks of an index this large keep no word sets (memory and the time to build them at start).
MAX_CHUNKS = 20_000


def _folded(word: str) -> str:
    """The word's letters without accents, and the few Latin letters that do not decompose, in ASCII."""
    decomposed = unicodedata.normalize("NFKD", word.translate(_FOLD))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _forms(word: str) -> set[str] | None:
    """Every form a lowercase word of a chunk could be indexed under; None when one of them cannot be
    told (a Latin letter this module does not fold)."""
    if word.isascii():
        return {word, stem(word)}
    folded = _folded(word)
    forms = {word, folded, stem(word), _folded(stem(word))}
    if folded.isascii():
        forms.add(stem(folded))
    elif any(not ch.isascii() and unicodedata.name(ch, "").startswith("LATIN") for ch in folded):
        return None
    return forms


@dataclass(frozen=True)
class ChunkWords:
    """For each form of a word, the chunks holding it (bit n: the n-th chunk of `of`'s texts)."""

    chunks: dict[str, int]
    anything: int  # chunks with a word whose indexed form cannot be told: they may hold any word

    @classmethod
    def of(cls, texts: Iterable[str]) -> ChunkWords:
        chunks: dict[str, int] = {}
        anything = 0
        forms_of: dict[str, set[str] | None] = {}
        for n, text in enumerate(texts):
            bit = 1 << n
            if not text.isascii() and any(unicodedata.category(ch).startswith("M") for ch in text):
                anything |= bit  # a combining mark: LanceDB may split this text into other words than TOKEN
                continue
            for word in {token.lower() for token in TOKEN.findall(text)}:  # split, then lowercase, as LanceDB
                if word not in forms_of:
                    forms_of[word] = _forms(word)
                forms = forms_of[word]
                if forms is None:
                    anything |= bit
                    continue
                for form in forms:
                    chunks[form] = chunks.get(form, 0) | bit
        return cls(chunks, anything)

    def may_match(self, phrase: str) -> bool:
        """False only when no chunk can hold every word of `phrase` that LanceDB would look for."""
        if not phrase.isascii():
            return True
        required = {
            stem(word)
            for word in TOKEN.findall(phrase.lower())
            if len(word) < LONG_TOKEN and word not in _OPTIONAL and stem(word) not in _OPTIONAL_STEMS
        }
        if not required:
            return True
        found = -1
        for word in required:
            found &= self.chunks.get(word, 0) | self.anything
            if not found:
                return False
        return True
