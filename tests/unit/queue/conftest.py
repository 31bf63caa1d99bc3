from .support import clock, queue

__all__ = ["clock", "queue"]
