"""``python -m segscore``: the same as the ``segscore`` command."""

from segscore.cli.main import entry

if __name__ == "__main__":
    entry()
