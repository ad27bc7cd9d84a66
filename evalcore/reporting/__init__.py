"""evalcore.reporting."""

__all__: list[str] = []
