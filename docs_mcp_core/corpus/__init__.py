"""A staged tree, walked and resolved: manifests, in-file directives, globs, markdown, prompts, taxonomy."""
