"""What a search or get_doc request may ask for: the tool schemas and the request API check the same bounds."""

DEFAULT_LIMIT = 10
MAX_LIMIT = 50
MAX_CONTEXT = 5
