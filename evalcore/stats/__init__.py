"""evalcore.stats."""

__all__: list[str] = []
