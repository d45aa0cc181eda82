"""``torch`` that a file gets only through a star import of a project module (``from utils import *`` where
utils imports torch; sample17a: BART's training_base.py, practical-pytorch, DeepRL, Towards-Realtime-MOT): the
code says ``torch.x`` with no import of its own, so the name is the torch module."""

from __future__ import annotations

from precision_helpers import findings_of


def test_torch_from_a_project_star_import_is_the_torch_module(lint):
    source = ("from utils import *\n\n"
              "def train(model, batch):\n"
              "    with torch.cuda.amp.autocast():\n"
              "        return model(batch)\n")
    assert [f.row for f in findings_of(lint, source, "TP202")] == [4]


def test_a_relative_star_import_counts_too(lint):
    source = "from .common import *\n\nstate = torch.load(path)\n"
    assert [f.row for f in findings_of(lint, source, "TP301")] == [3]


def test_a_module_scheduler_reached_through_a_star_import(lint):
    source = ("from ..network import *\n\n"
              "class Agent:\n"
              "    def __init__(self, opt):\n"
              "        self.scheduler = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1.0)\n\n"
              "    def step(self, steps):\n"
              "        self.scheduler.step(steps)\n")
    assert [f.row for f in findings_of(lint, source, "TP209")] == [8]


def test_a_torch_bound_after_the_star_import_wins(lint):
    source = "from utils import *\ntorch = FakeTorch()\nstate = torch.load(path)\n"
    assert findings_of(lint, source, "TP301") == []


def test_without_a_star_import_an_unbound_torch_is_unknown(lint):
    source = "from utils import helper\n\nstate = torch.load(path)\n"
    assert findings_of(lint, source, "TP301") == []
