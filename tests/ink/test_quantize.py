"""kit-auc's quantization rules, one by one."""

import numpy as np
import pytest

from segscore.errors import ScoreError
from segscore.ink.quantize import MIN_FLOAT_LEVELS, quantize_values, quantizer_for, tile_stats


def rule(values):
    v = np.asarray(values)
    return quantizer_for(v.dtype, tile_stats(v.reshape(1, -1)), name="m")


def levels(values):
    return quantize_values(np.asarray(values))[0]


def test_uint8_and_uint16_are_scored_as_they_are():
    a = np.array([0, 1, 7, 255], np.uint8)
    q = quantizer_for(a.dtype)
    assert q.passthrough and q.top == 255
    np.testing.assert_array_equal(levels(a), [0, 1, 7, 255])
    b = np.array([0, 3, 65535], np.uint16)
    assert quantizer_for(b.dtype).top == 65535
    np.testing.assert_array_equal(levels(b), [0, 3, 65535])


def spread(n, top):
    return np.linspace(0, top, n)


def test_float_scales_by_the_maximum():
    unit = spread(1000, 1.0)
    q = rule(unit)
    assert not q.passthrough and q.scale == 65535.0 and q.offset == 0.0
    np.testing.assert_array_equal(levels(unit), np.clip(np.rint(unit * 65535), 0, 65535))
    byte = spread(1000, 255.0)
    assert rule(byte).scale == 257.0
    np.testing.assert_array_equal(levels(byte), np.rint(byte * 257))
    word = spread(1000, 60000.0)
    assert rule(word).scale == 1.0
    np.testing.assert_array_equal(levels(word), np.rint(word))


def test_a_float_level_is_rint_in_float64():
    v = np.array([0.5 / 65535, 1.5 / 65535, 2.5 / 65535] + list(spread(300, 1.0)), np.float32)
    want = np.clip(np.rint(v.astype(np.float64) * 65535), 0, 65535)
    np.testing.assert_array_equal(levels(v), want)


@pytest.mark.parametrize("values", [np.array([-1.0, 0.3, 2.0]), np.array([0.0, 70000.0, 5.0]),
                                    np.linspace(-5, 5, 1000)])
def test_values_outside_0_65535_are_stretched_min_to_max(values):
    q = rule(values)
    assert q.offset == values.min() and q.scale == pytest.approx(65535 / (values.max() - values.min()))
    lev = levels(values)
    assert lev.min() == 0 and lev.max() == 65535
    # ranks are kept
    assert np.all(np.diff(lev[np.argsort(values)]) >= 0)


def test_fewer_than_256_levels_are_stretched():
    few = np.repeat(np.linspace(0.4, 0.6, MIN_FLOAT_LEVELS - 1), 3)  # 255 levels on the 0..1 scale
    q = rule(few)
    assert q.offset == pytest.approx(0.4) and levels(few).max() == 65535
    enough = np.linspace(0.4, 0.6, MIN_FLOAT_LEVELS)
    assert rule(enough).offset == 0.0


def test_a_tiny_range_keeps_its_ranks():
    v = np.array([0.50000001, 0.50000002, 0.50000003])
    lev = levels(v)
    assert lev[0] == 0 and 32766 <= lev[1] <= 32768 and lev[2] == 65535


def test_logits_keep_their_ranks():
    v = np.array([-12.0, -3.0, 0.5, 4.0, 9.0])
    lev = levels(v)
    assert list(np.argsort(lev)) == list(range(5)) and lev[0] == 0 and lev[-1] == 65535


def test_a_constant_map_outside_the_range_ties():
    v = np.full(10, -4.0)
    q = rule(v)
    assert q.scale == 0.0
    assert set(levels(v)) == {0}


def test_nan_and_inf_are_refused_with_their_count():
    with pytest.raises(ScoreError, match=r"m: the map holds 2 NaN or infinite values; replace them \(with 0"):
        rule(np.array([0.1, np.nan, np.inf, 0.3]))


def test_other_integer_dtypes_follow_the_float_rules():
    v = np.arange(0, 1000, dtype=np.int32)  # max 999 > 255: the 0..65535 scale
    assert rule(v).scale == 1.0
    signed = np.array([-3, 5, 9], np.int16)
    assert rule(signed).offset == -3.0
