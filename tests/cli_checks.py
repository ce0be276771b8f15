"""Checks shared by the command-line tests."""


def one_line_error(code, out, err, fragment):
    """A refused input: exit 2, nothing on stdout, one line on stderr naming ``fragment``."""
    assert code == 2, (code, out, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert fragment in lines[0], lines[0]
