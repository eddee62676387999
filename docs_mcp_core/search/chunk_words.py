"""Where each word of content_text stands, as LanceDB's full-text index keeps it: the exact-phrase query
is not sent when no chunk holds the query's words in its order, since it would find nothing.

Most questions an agent asks are not written anywhere word for word, so their exact-phrase query
comes back empty; it still costs about as much of LanceDB's time as the full-text query. LanceDB
matches a phrase by position: each word the index keeps (its Porter2 stem; stop words and
over-long tokens are dropped but keep their place) must stand at the same distance from the
others as in the query. The check only ever says "cannot match" when that is certain: a chunk
word beyond ASCII may be any word, a chunk with combining marks may hold anything, a query beyond
ASCII is always sent, and a query word that may be a stop word is not required.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

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
# Chunks of an index this large keep no word positions (memory and the time to build them at start).
MAX_CHUNKS = 20_000
# ... nor those of this much content_text: about a word in six characters, two int32s a word, so at most
# about 16 MB, built in a few seconds of CPU (texts held in memory reach MEMORY_TEXT_BYTES, five times more).
MAX_CHARS = 12_000_000
GAP = -1  # between chunks (and around them all): no phrase spans two
ANY = -2  # a word beyond ASCII: LanceDB folds it after stemming, so it may equal any word
NEVER = -3  # a word in a script that ASCII folding leaves as it is: it equals no word of an ASCII query
DROPPED = -4  # a word LanceDB does not index (a stop word, or LONG_TOKEN bytes or more): it keeps its place
# Scripts whose letters no ASCII folding spells in ASCII.
_OTHER_SCRIPTS = (
    "CJK",
    "CYRILLIC",
    "GREEK",
    "HIRAGANA",
    "KATAKANA",
    "HANGUL",
    "ARABIC",
    "HEBREW",
    "DEVANAGARI",
    "THAI",
)
SPAN = 64  # a query whose kept words span more positions is always sent
# The words of a chunk as LanceDB's tokenizer splits them: TOKEN, and the symbols it takes for letters
# (Unicode's Alphabetic) where `\w` does not, letters in circles and squares; checked against LanceDB
# over every code point this Python's Unicode database knows.
_CHUNK_TOKEN = re.compile("(?:[^\\W_]|[\u24b6-\u24e9\U0001f130-\U0001f149\U0001f150-\U0001f169\U0001f170-\U0001f189])+")


@dataclass(frozen=True)
class ChunkWords:
    """Every chunk's words in order as ids of their stems, one sequence with GAP between chunks."""

    ids: dict[str, int]  # stem -> id
    words: np.ndarray  # int32: the id at each position, GAP, or ANY; SPAN GAPs at each end
    at: np.ndarray  # positions in `words`, grouped by id (ids in order), then those of ANY
    starts: np.ndarray  # where each id's positions begin in `at` (one more entry: where ANY's begin)
    anything: bool  # a chunk with combining marks: LanceDB may split it into other words than TOKEN
    chunk_starts: np.ndarray  # int64: where each chunk's words begin in `words`
    lengths: np.ndarray  # int32: the words LanceDB indexes of each chunk (its BM25 document length)
    # every chunk split as LanceDB splits it (no combining marks, no code point newer than Python's Unicode
    # database): its BM25 counts are exact, but for query words a word beyond ASCII may fold into (`folds`)
    exact: bool
    folds: re.Pattern[str] | None  # the ASCII stems a word beyond ASCII (ANY) may be folded into, or None
    docs: int  # chunks with a word the index keeps: BM25's N
    average: np.float32  # their words on average: BM25's avgdl
    df: np.ndarray  # int64: the chunks holding each id

    @classmethod
    def of(cls, texts: Iterable[str]) -> ChunkWords:
        ids: dict[str, int] = {}
        known: dict[str, int] = {}  # lowercase word -> id of its stem, or ANY
        words = [GAP] * SPAN
        anything = False
        chunk_starts: list[int] = []
        lengths: list[int] = []
        unknown = False
        for text in texts:
            chunk_starts.append(len(words))
            if not text.isascii() and any(_joins(ch) for ch in text):
                anything = True
                break
            if not text.isascii() and any(unicodedata.category(ch) == "Cn" for ch in text):
                # a code point newer than this Python's Unicode database: how LanceDB splits the chunk is not
                # known, so it may hold any phrase
                words += [ANY] * SPAN + [GAP]
                lengths.append(0)
                unknown = True
                continue
            length = 0
            for token in (TOKEN if text.isascii() else _CHUNK_TOKEN).findall(text):  # split, lowercase: as LanceDB
                word = token.lower()
                found = known.get(word)
                if found is None:
                    found = known[word] = _word_id(word, ids)
                words.append(found)
                length += found != DROPPED
            lengths.append(length)
            words.append(GAP)
        words += [GAP] * SPAN
        array = np.asarray(words, dtype=np.int32)
        keys = np.where(array == ANY, len(ids), np.maximum(array, GAP))  # ANY after every id; GAP, NEVER before
        at = np.argsort(keys, kind="stable").astype(np.int32)
        counts = np.bincount(keys[keys >= 0], minlength=len(ids) + 1)
        starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64) + int(np.count_nonzero(keys < 0))
        chunk_at = np.asarray(chunk_starts, dtype=np.int64)
        sizes = np.asarray(lengths, dtype=np.int32)
        docs = int(np.count_nonzero(sizes))
        # each id's chunks: its positions are in order, so are their chunks; count each (id, chunk) once
        of_position = np.searchsorted(chunk_at, at[starts[0] : starts[len(ids)]], side="right") - 1
        id_of = np.repeat(np.arange(len(ids), dtype=np.int64), np.diff(starts[: len(ids) + 1]))
        pairs = np.unique(id_of * max(len(chunk_at), 1) + of_position)
        return cls(
            ids,
            array,
            at,
            starts,
            anything,
            chunk_at,
            sizes,
            not anything and not unknown,
            _folds([word for word, found in known.items() if found == ANY]),
            docs,
            np.float32(np.float32(int(sizes.sum())) / np.float32(max(docs, 1))),
            np.bincount(pairs // max(len(chunk_at), 1), minlength=len(ids)),
        )

    def _positions(self, word: int) -> np.ndarray:
        return self.at[self.starts[word] : self.starts[word + 1]] if word >= 0 else self.at[:0]

    def may_match(self, phrase: str) -> bool:
        """False only when no chunk holds the words of `phrase` that LanceDB would look for, at the
        distances from each other they have in it."""
        if self.anything or not phrase.isascii():
            return True
        required = [
            (place, self.ids.get(stem(word), len(self.ids) + 1))
            for place, word in enumerate(w.lower() for w in TOKEN.findall(phrase))
            if len(word) < LONG_TOKEN and word not in _OPTIONAL and stem(word) not in _OPTIONAL_STEMS
        ]
        if not required or required[-1][0] - required[0][0] >= SPAN:
            return True
        known = [(place, word) for place, word in required if word < len(self.ids)]
        wild = self._positions(len(self.ids))  # the positions of ANY
        # where the phrase would begin: from the positions of its rarest known word, and of any ANY word
        begins = [wild - place for place, _ in required] if len(wild) else []
        if known:
            place, rarest = min(known, key=lambda pw: int(self.starts[pw[1] + 1] - self.starts[pw[1]]))
            begins.append(self._positions(rarest) - place)
        elif not begins:
            return False  # words no chunk holds
        starts = np.concatenate(begins)
        for place, word in required:
            if not len(starts):
                return False
            held = self.words[starts + place]
            starts = starts[(held == word) | (held == ANY)]
        return bool(len(starts))

    def terms(self, query: str) -> list[int] | None:
        """The ids of the words LanceDB's index looks for in an ASCII query, in order, repeats kept (-1: a
        word no chunk holds); None when this index's counts are not exact for it (see `exact`)."""
        if not self.exact or not query.isascii():
            return None
        stems = [stem(word) for word in (w.lower() for w in TOKEN.findall(query)) if indexed(word)]
        if self.folds is not None and any(self.folds.fullmatch(word) for word in stems):
            return None
        return [self.ids.get(word, -1) for word in stems]

    def chunk_of(self, positions: np.ndarray) -> np.ndarray:
        """The chunk (its place in the texts given to `of`) of each position in `words`."""
        return np.searchsorted(self.chunk_starts, positions, side="right") - 1

    def holding(self, phrase: str) -> np.ndarray | None:
        """The chunks that hold `phrase` as LanceDB's exact-phrase query matches it (each word it indexes at
        its distance from the others), in order; None when that cannot be told exactly here."""
        terms = self.terms(phrase)
        if not terms:
            return None
        required = [
            (place, self.ids.get(stem(word), -1))
            for place, word in enumerate(w.lower() for w in TOKEN.findall(phrase))
            if indexed(word)
        ]
        first, last = required[0][0], required[-1][0]
        if last - first >= SPAN:
            return None
        if any(word < 0 for _, word in required):
            return np.empty(0, dtype=np.int64)
        place, rarest = min(required, key=lambda pw: int(self.starts[pw[1] + 1] - self.starts[pw[1]]))
        starts = self._positions(rarest) - place
        for place, word in required:
            starts = starts[self.words[starts + place] == word]
        # no GAP between the first and last word: a stop word's place may not fall between two chunks
        chunks = self.chunk_of(starts + first)
        return np.unique(chunks[chunks == self.chunk_of(starts + last)])


def indexed(word: str) -> bool:
    """Whether LanceDB's full-text index keeps a lowercase word: shorter than LONG_TOKEN bytes, and neither
    it nor its stem a stop word."""
    return len(word.encode()) < LONG_TOKEN and word not in STOP_WORDS and stem(word) not in STOP_WORDS


def _word_id(word: str, ids: dict[str, int]) -> int:
    """The id of a lowercase word's stem (a new one for a new stem), DROPPED, ANY or NEVER."""
    if not indexed(word):
        return DROPPED
    return ids.setdefault(stem(word), len(ids)) if word.isascii() else _unfolded(word)


def _joins(ch: str) -> bool:
    """A combining mark, which LanceDB may keep inside a word (and fold away) where TOKEN splits; not a
    variation selector (an emoji's U+FE0F), which LanceDB splits at as TOKEN does."""
    return unicodedata.category(ch).startswith("M") and not (
        "\ufe00" <= ch <= "\ufe0f" or "\U000e0100" <= ch <= "\U000e01ef"
    )


def _folds(beyond: list[str]) -> re.Pattern[str] | None:
    """What the words beyond ASCII may be indexed as: LanceDB stems a word, then folds each letter beyond
    ASCII into up to four ASCII characters (or leaves it), so each stands for any run of up to four letters
    and digits; from the word as written too, should a stemmer treat letters beyond ASCII differently."""
    if not beyond:
        return None
    shapes = {
        "".join(re.escape(ch) if ch.isascii() else "[a-z0-9]{0,4}" for ch in form)
        for word in beyond
        for form in (word, stem(word))
    }
    return re.compile("|".join(sorted(shapes)))


def _unfolded(word: str) -> int:
    """NEVER for a word with a letter of another script than Latin (it stays beyond ASCII), else ANY."""
    for ch in word:
        if not ch.isascii() and unicodedata.name(ch, "").startswith(_OTHER_SCRIPTS):
            return NEVER
    return ANY
