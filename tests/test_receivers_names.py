"""Issue #23 (names, attributes, receivers, protocols): tensors and profiler events known in more ways, a
from-imported `reduce_op`, `__torch_function__` as a plain method, `$TORCH_HUB`; each on real torch too."""

from __future__ import annotations

import textwrap
import warnings

import pytest


def _rows(lint, code, select):
    return sorted({f.row for f in lint(textwrap.dedent(code), select=select).findings})


def test_tensors_known_from_methods_ops_annotations_and_modules(lint):
    code = """\
        import torch
        import torch.nn as nn
        from typing import List, Optional
        x = torch.randn(4, 4)
        a = x.view(2, 8).storage()
        b = (x + 1).storage()
        c = torch.matmul(x, x).storage()
        d = x.float().to("cpu").storage()
        def f(ts: List[torch.Tensor], t: Optional[torch.Tensor] = None):
            for u in ts:
                u.storage()
            return t.storage()
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)
                self.register_buffer("running", torch.zeros(2))
            def s(self):
                return self.fc.weight.storage(), self.running.storage()
        net = Net()
        sd = net.state_dict()
        for k, v in sd.items():
            v.storage()
        sd["fc.weight"].storage()
        list(net.parameters())[0].storage()
        """
    assert _rows(lint, code, ["TP224"]) == [5, 6, 7, 8, 11, 12, 19, 23, 24, 25]


def test_unknown_receivers_stay_unknown(lint):
    code = """\
        import torch
        import torch.nn as nn
        def f(x, ts):
            y = x.view(2)
            for t in ts:
                t.storage()
            return y.storage()
        class Holder:
            def __init__(self):
                self.buf = make()
            def s(self):
                return self.buf.storage()
        class Net(nn.Module):
            def __init__(self, w):
                super().__init__()
                self.w = w
            def s(self):
                return self.w.storage()
        opt = torch.optim.SGD([], lr=0.1)
        for k, v in opt.state_dict().items():
            v.storage()
        label = "%s" % torch.ones(1)
        label.storage()
        """
    assert _rows(lint, code, ["TP224", "TP263"]) == []


def test_profiler_events_in_loops_lambdas_and_passed_in_profilers(lint):
    code = """\
        import torch
        with torch.profiler.profile() as prof:
            pass
        for e in prof.events():
            print(e.cuda_time_total)
        for e in prof.key_averages():
            print(e.cuda_time)
        ranked = sorted(prof.events(), key=lambda e: e.self_cuda_time_total)
        first = prof.events()
        one = first[0]
        print(one.cuda_time)
        def summarize(p):
            return [r.cuda_time for r in p.key_averages()], p.key_averages().total_average().cuda_time
        def other(p):
            return [e.cuda_time_total for e in p.events()]
        """
    assert _rows(lint, code, ["TP208"]) == [5, 7, 8, 11, 13]


def test_a_from_imported_reduce_op_is_reported_where_its_attributes_are_read(lint):
    code = "import torch.distributed as dist\ndef sync(t):\n    from torch.distributed import reduce_op\n" \
           "    dist.all_reduce(t, op=reduce_op.SUM)\n"
    assert _rows(lint, code, ["TP201"]) == [3, 4]


def test_torch_function_plain_method_and_its_uses(lint):
    code = """\
        import torch
        class W:
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return func(*args)
        class T(torch.Tensor):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return super().__torch_function__(func, types, args, kwargs or {})
        class Good:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return func(*args)
        w = W()
        r = torch.add(w, 1)
        t = torch.ones(2).as_subclass(T)
        u = t + 1
        g = Good()
        torch.add(g, 1)
        if False:
            class Old:
                def __torch_function__(self, func, types, args=(), kwargs=None):
                    return func(*args)
        """
    assert _rows(lint, code, ["TP261"]) == [3, 6, 13, 15, 20]


def test_torch_hub_env(lint):
    code = "import os\nimport torch\nos.environ['TORCH_HUB'] = '/x'\nd = torch.hub.get_dir()\n" \
           "sd = torch.hub.load_state_dict_from_url('u', model_dir='/m')\n"
    assert _rows(lint, code, ["TP262"]) == [4]


@pytest.mark.torch
def test_the_facts_hold_on_torch(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setenv("TORCH_HUB", "/tmp/torchpatch-hub")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.hub.get_dir()
    assert any("TORCH_HUB is deprecated" in str(w.message) for w in caught)

    class W:
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*[torch.ones(1) if isinstance(a, W) else a for a in args])

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.nn.functional.relu(W())
    assert any("as a plain method is deprecated" in str(w.message) for w in caught)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.ones(2).resize(2)
    assert any("non-inplace resize is deprecated" in str(w.message) for w in caught)


def test_objects_built_into_self_attributes_and_indexed_results(lint):
    code = """\
        import torch
        from torch.utils.data import ConcatDataset
        from torch.utils._pytree import tree_flatten
        class Data:
            def __init__(self, parts):
                self.data = ConcatDataset(parts)
            def sizes(self):
                return self.data.cummulative_sizes
        class Other:
            def __init__(self, parts):
                self.data = ConcatDataset(parts)
            def reset(self, d):
                self.data = d
            def sizes(self):
                return self.data.cummulative_sizes
        spec = tree_flatten([1, 2])[1].children_specs
        leaves = tree_flatten([1, 2])[0].children_specs
        """
    assert _rows(lint, code, ["TP260"]) == [8, 16]


def test_removed_torch_six_is_reported_outside_import_fallbacks(lint):
    code = "import torch\nfrom torch._six import inf\ntry:\n    from torch._six import string_classes\n" \
           "except ImportError:\n    string_classes = str\n"
    assert _rows(lint, code, ["TP101"]) == [2]


def test_layer_outputs_are_tensors_but_not_those_of_rnns_or_containers(lint):
    code = """\
        import torch
        import torch.nn as nn
        class N(nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = nn.LSTM(2, 2)
                self.fc = nn.Linear(2, 2)
                self.seq = nn.Sequential(nn.Linear(2, 2))
            def forward(self, x):
                a = self.rnn(x)
                b = self.fc(x)
                c = self.seq(x)
                return a.storage(), b.storage(), c.storage()
        class Trainer:
            def __init__(self):
                self.model = nn.Conv2d(1, 1, 1)
            def step(self, batch):
                return self.model(batch).storage()
        lin = nn.Linear(2, 2)
        out = lin(torch.ones(2))
        out.storage()
        """
    assert _rows(lint, code, ["TP224"]) == [13, 18, 21]
