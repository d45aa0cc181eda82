"""TP209 on the call of a module torch warns for in ``forward`` (issue #23): the line torch warns on."""

from __future__ import annotations

import textwrap

import pytest

HEAD = """
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.softmax = nn.Softmax()

    def forward(self, x):
        return self.softmax(x) + self.softmax(x * 2)
"""


@pytest.fixture
def found(lint):
    """found(source) -> [(row, message)] of TP209's findings."""
    return lambda source: [(f.row, f.message) for f in lint(textwrap.dedent(source), select=["TP209"]).findings]


def test_every_call_of_the_attribute_is_reported_with_the_line_it_was_built_on(found):
    reported = found(HEAD)
    assert [row for row, _ in reported] == [9, 12, 12]
    assert all("built without `dim=` on line 9" in message for _, message in reported[1:])
    assert "self.softmax(...)" in reported[1][1]


def test_a_local_module_is_reported_where_it_is_called(found):
    reported = found("""
        import torch.nn as nn

        def f(x):
            m = nn.LogSoftmax()
            return m(x)
    """)
    assert [row for row, _ in reported] == [5, 6]
    assert "`m(...)` calls the `nn.LogSoftmax` built without `dim=` on line 5" in reported[1][1]


def test_a_module_built_with_its_argument_is_not_reported_where_it_is_called(found):
    assert found(HEAD.replace("nn.Softmax()", "nn.Softmax(dim=-1)")) == []


def test_an_attribute_rebound_to_another_module_is_not_followed(found):
    reported = found(HEAD.replace("        self.softmax = nn.Softmax()\n",
                                "        self.softmax = nn.Softmax()\n        self.softmax = nn.Identity()\n"))
    assert [row for row, _ in reported] == [9]


def test_a_name_bound_elsewhere_in_the_function_is_not_followed(found):
    reported = found("""
        import torch.nn as nn

        def f(x, layers):
            m = nn.Softmax()
            for m in layers:
                x = m(x)
            return x
    """)
    assert [row for row, _ in reported] == [5]


def test_the_same_attribute_in_another_class_is_not_reported(found):
    reported = found(HEAD + """

class Other(nn.Module):
    def forward(self, x):
        return self.softmax(x)
""")
    assert [row for row, _ in reported] == [9, 12, 12]


def test_a_module_inside_sequential_is_reported_where_the_sequential_is_called(found):
    # torch warns in Softmax.forward, which Sequential.forward calls: the user's line is ``head(x)``.
    reported = found("""
        import torch.nn as nn

        head = nn.Sequential(nn.Linear(2, 2), nn.Softmax())
        y = head(x)
    """)
    assert [row for row, _ in reported] == [4, 5]


def test_a_module_only_passed_on_is_reported_once_where_it_is_built(found):
    reported = found("""
        import torch.nn as nn

        head = build(nn.Linear(2, 2), nn.Softmax())
        y = head(x)
    """)
    assert [row for row, _ in reported] == [4]


def test_a_class_nested_in_the_class_has_its_own_self(found):
    reported = found(HEAD.replace("    def forward(self, x):", """    class Inner(nn.Module):
        def forward(self, x):
            return self.softmax(x)

    def forward(self, x):"""))
    assert [row for row, _ in reported] == [9, 16, 16]


def test_the_call_is_not_reported_when_the_module_is_built_with_a_variable_dim(found):
    assert found(HEAD.replace("nn.Softmax()", "nn.Softmax(dim=axis)")) == []
