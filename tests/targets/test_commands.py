"""The ScrollGT parity commands are registered, with the spec's names as aliases."""

import pytest


def test_help_lists_the_commands(cli):
    code, out, err = cli("--help")
    text = out + err
    for name in ("target", "columns", "check", "placement"):
        assert name in text


@pytest.mark.parametrize("alias,command", [("score", "target"), ("score-columns", "columns")])
def test_aliases_reach_the_same_command(cli, alias, command):
    code_a, out_a, err_a = cli(alias, "--help")
    code_c, out_c, err_c = cli(command, "--help")
    assert code_a == code_c == 0
    assert out_a.split("\n", 1)[1] == out_c.split("\n", 1)[1]


def test_usage_errors_exit_2(cli):
    assert cli("target")[0] == 2
    assert cli("columns", "only-one-arg")[0] == 2
    assert cli("placement")[0] == 2
    assert cli("check", "--window-px", "x", "--scan-um", "8")[0] == 2
