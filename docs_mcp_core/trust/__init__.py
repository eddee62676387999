"""Trust: find text in third-party docs that is addressed to an AI agent, and what a human cannot see.

`rules` (the rule list, data in rules.yaml), `scan` (findings of one chunk), `sanitize` (the
Markdown a human reader sees), `policy` (a corpus's manifests: extra rules, disabled rules,
allow-list). Nothing is imported here, so the read path can import `sanitize` alone.
"""
