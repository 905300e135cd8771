"""Python fixture: classes, nested classes, methods, decorators, module constants."""

import functools

LIMIT = 10


class Repository:
    """A store."""

    class Entry:
        def describe(self):
            return "entry"

    def __init__(self):
        self.items = []

    @property
    def size(self):
        return len(self.items)

    @staticmethod
    def create():
        return Repository()


@functools.lru_cache(maxsize=None)
def load(path):
    return Repository.create()


def outer():
    def inner():
        return load("x")

    return inner
