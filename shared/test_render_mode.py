import pytest

from shared.render_mode import checked_render_mode, warn_no_render_mode


def test_a_listed_mode_or_none_passes_through():
    assert checked_render_mode(None, ["rgb_array"]) is None
    assert checked_render_mode("ansi", ("ansi",)) == "ansi"


@pytest.mark.parametrize("mode", ["human", "", "RGB_ARRAY", 1])
def test_any_other_mode_is_refused_naming_the_modes(mode):
    with pytest.raises(ValueError, match=r"render_mode must be None or one of \['rgb_array'\], got"):
        checked_render_mode(mode, ("rgb_array",))


def test_the_warning_names_the_mode_to_ask_for():
    with pytest.warns(UserWarning, match='render_mode="ansi"'):
        warn_no_render_mode("ansi")
