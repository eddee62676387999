"""Versioned corpora: version specs, their order, the version a project's lockfile pins, and what changed
between two indexed versions. Pure functions over strings and chunk records: the build path (staging a tag)
and the read path (serving a pinned version) both call them, so nothing here imports either."""
