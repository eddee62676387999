"""The read path: the published index, the hybrid engine, fusion and cursors."""
