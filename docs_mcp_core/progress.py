"""Progress and status lines for long work: on stderr, a live bar only on a terminal."""

from __future__ import annotations

import sys
import time
from typing import Protocol, TextIO


class Reporter(Protocol):
    def info(self, message: str) -> None: ...
    def warn(self, message: str) -> None: ...
    def progress(self, label: str, done: int, total: int) -> None: ...


class StderrReporter:
    """`warn:` prefixed warnings; progress redrawn in place on a TTY, else every 10% of long jobs."""

    def __init__(self, stream: TextIO | None = None, quiet: bool = False, bar_only_on_tty: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.bar_only_on_tty = bar_only_on_tty
        self.tty = self.stream.isatty()
        self._last: tuple[str, int] = ("", -1)
        self._live = False

    def _clear(self) -> None:
        if self._live:
            self.stream.write("\r\x1b[K")
            self._live = False

    def info(self, message: str) -> None:
        if not self.quiet:
            self._clear()
            print(message, file=self.stream, flush=True)

    def warn(self, message: str) -> None:
        self._clear()
        print(f"warn: {message}", file=self.stream, flush=True)

    def progress(self, label: str, done: int, total: int) -> None:
        if self.quiet or total <= 0:
            return
        pct = int(100 * done / total)
        if self.tty:
            width = 30
            filled = int(width * done / total)
            self.stream.write(f"\r\x1b[K{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
            self.stream.flush()
            self._live = done < total
            if done >= total:
                self.stream.write("\n")
            return
        if total < 200 or self.bar_only_on_tty:
            return
        step = pct // 10
        if (label, step) != self._last and (step > self._last[1] or label != self._last[0]):
            self._last = (label, step)
            print(f"{label}: {done}/{total}", file=self.stream, flush=True)


class NullReporter:
    def info(self, message: str) -> None:
        pass

    def warn(self, message: str) -> None:
        pass

    def progress(self, label: str, done: int, total: int) -> None:
        pass


class Timer:
    def __init__(self) -> None:
        self.start = time.perf_counter()

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.start


def counted(n: int, noun: str) -> str:
    """`n` and the noun, plural unless one: "1 file", "3 files"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
