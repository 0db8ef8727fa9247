"""parabit.data.errors: how readers name what they cannot read."""

from __future__ import annotations

import pytest

from parabit.data.msrp import read_msrp
from parabit.data.sick import read_sick


@pytest.mark.parametrize(("reader", "message"), [
    (read_sick, r"unknown SICK split 'dev'; choose one of \['train', 'trial', 'test'\]"),
    (read_msrp, r"unknown MSRP split 'dev'; choose one of \['train', 'test'\]"),
])
def test_an_unknown_split_is_refused_with_the_splits_to_choose_from(reader, message):
    with pytest.raises(ValueError, match=message):
        reader("dev")
