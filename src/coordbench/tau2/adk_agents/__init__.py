"""ADK agents folder: each sub-folder is one agent for ``adk api_server --a2a`` / ``adk web --a2a``."""
