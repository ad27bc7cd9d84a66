"""evalcore.evaluators."""

__all__: list[str] = []
