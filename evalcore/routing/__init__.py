"""evalcore.routing."""

__all__: list[str] = []
