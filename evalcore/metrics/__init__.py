"""evalcore.metrics."""

__all__: list[str] = []
