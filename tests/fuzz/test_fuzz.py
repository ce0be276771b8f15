"""A fixed sample of malformed invocations of every command (tests/fuzz/corpus.py): each is
refused (exit 2, one line on stderr, no traceback) or scored (exit 0, JSON without NaN); never
exit 1. ``benchmarks/fuzz.py --cases N`` runs more, each in its own process (signals, time)."""

import json

import pytest

from tests.fuzz.corpus import cases

N_CASES = 160


def _no_constant(text):
    raise ValueError(f"JSON holds {text}")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return list(cases(tmp_path_factory.mktemp("fuzz"), N_CASES, seed=2026))


def classify(code, out, err, folder=None) -> str:
    """``refused``, ``scored`` or what went wrong. A refusal is one line on stderr with nothing
    on stdout, and names ``folder`` (the damaged case's own folder) when one is given; a score
    (exit 0, or 3 for `segscore check`'s violation) is JSON without NaN."""
    if code == 2:
        lines = err.strip().splitlines()
        if out == "" and len(lines) == 1 and "Traceback" not in err:
            if folder is None or folder in lines[0]:
                return "refused"
            return "refusal without the file"
        return "bad refusal"
    if code in (0, 3):
        try:
            json.loads(out, parse_constant=_no_constant)
        except ValueError:
            return "bad json"
        return "scored"
    return f"exit {code}"


def test_no_malformed_input_crashes_a_command(cli, corpus):
    import warnings

    wrong = []
    seen = {"refused": 0, "scored": 0}
    for label, argv, folder in corpus:
        with warnings.catch_warnings(record=True) as caught:  # on the command line: more lines on stderr
            warnings.simplefilter("always")
            warnings.simplefilter("ignore", ResourceWarning)  # not shown by default (numpy's own, on a bad .npz)
            kind = classify(*cli(*argv), folder)
        if caught and kind in seen:
            kind = f"warning {caught[0].category.__name__}: {caught[0].message}"
        if kind in seen:
            seen[kind] += 1
        else:
            code, out, err = cli(*argv)
            wrong.append(f"{label}: {kind}: {err.strip().splitlines()[-1] if err.strip() else out[:200]}")
    assert not wrong, f"{len(wrong)} of {len(corpus)} went wrong ({seen}):\n" + "\n".join(wrong)
    assert seen["refused"] > N_CASES // 4  # the corpus does damage
