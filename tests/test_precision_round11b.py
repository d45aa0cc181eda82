"""Round 11, part b of issue #8's precision sample: 111 findings read, all true; eight had a message that named the
gcc/nvcc spelling `-std=c++20` for an MSVC flag `/std:c++17` (fixed in TP435). These are that fix and the shapes
that needed the most care, as synthetic code (no package code): each must stay reported, and each safe fix read
must keep its exact text."""

from __future__ import annotations

from precision_helpers import findings_of

# -- TP435: the message names the standard in the flag's own compiler spelling ------------------------
# (a build script that picks gcc flags on posix and MSVC flags on Windows, both reaching the extension.)

_PLATFORM_FLAGS = (
    "import os\n"
    "from torch.utils.cpp_extension import load\n"
    "cuda_flags = ['-O3', '-std=c++14']\n"
    "if os.name == 'posix':\n"
    "    host_flags = ['-O3', '-std=c++14']\n"
    "elif os.name == 'nt':\n"
    "    host_flags = ['/O2', '/std:c++17']\n"
    "ext = load(name='ext', sources=['a.cu'], extra_cflags=host_flags, extra_cuda_cflags=cuda_flags)\n"
)


def test_an_msvc_std_flag_is_told_the_msvc_spelling_of_cxx20(lint):
    findings = findings_of(lint, _PLATFORM_FLAGS, "TP435", min_torch="2.4", target="2.15")
    by_flag = {f.message.split("`")[1]: f.message for f in findings}
    assert sorted(by_flag) == ["-std=c++14", "/std:c++17"]
    assert "builds extensions with: `/std:c++20`" in by_flag["/std:c++17"]
    assert "-std=c++20" not in by_flag["/std:c++17"]
    assert "builds extensions with: `-std=c++20`" in by_flag["-std=c++14"]
    # the same string literal in two lists is reported once per list element: three flags in all
    assert len(findings) == 3


def test_setup_py_flags_in_a_compile_args_dict_are_reported_for_both_compilers(lint):
    source = (
        "import os\n"
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
        "nvcc_flags = ['-O3', '-std=c++14', '-use_fast_math']\n"
        "if os.name == 'posix':\n"
        "    c_flags = ['-O3', '-std=c++14']\n"
        "elif os.name == 'nt':\n"
        "    c_flags = ['/O2', '/std:c++17']\n"
        "setup(name='ext', ext_modules=[CUDAExtension(name='_ext', sources=['a.cu'],\n"
        "      extra_compile_args={'cxx': c_flags, 'nvcc': nvcc_flags})], cmdclass={'build_ext': BuildExtension})\n"
    )
    findings = findings_of(lint, source, "TP435", min_torch="2.4", target="2.15")
    assert [f.row for f in findings] == [4, 6, 8]
    assert "`/std:c++20`" in findings[2].message


# -- TP202: a hasattr probe that every release passes is no guard ------------------------------------
# (a module picks bfloat16 autocast when `torch.cuda.amp` still has `autocast`: it has, deprecated, on 2.4-2.15.)

def test_a_hasattr_probe_for_the_old_autocast_keeps_the_finding(lint):
    source = (
        "import contextlib\n"
        "import functools\n"
        "import torch\n"
        "if torch.cuda.is_available() and hasattr(torch.cuda, 'amp') and hasattr(torch.cuda.amp, 'autocast'):\n"
        "    autocast = functools.partial(torch.cuda.amp.autocast, dtype=torch.bfloat16)\n"
        "else:\n"
        "    @contextlib.contextmanager\n"
        "    def autocast():\n"
        "        yield\n"
    )
    assert len(findings_of(lint, source, "TP202", min_torch="2.4")) == 1


def test_a_bare_custom_fwd_decorator_gets_the_device_type_call(lint):
    source = (
        "import torch\n"
        "from torch.autograd import Function\n"
        "from torch.cuda.amp import custom_bwd, custom_fwd\n"
        "\n"
        "class Encode(Function):\n"
        "    @staticmethod\n"
        "    @custom_fwd\n"
        "    def forward(ctx, x):\n"
        "        return x * 2\n"
        "\n"
        "    @staticmethod\n"
        "    @custom_bwd\n"
        "    def backward(ctx, g):\n"
        "        return g * 2\n"
    )
    assert len(findings_of(lint, source, "TP202", min_torch="2.4")) == 2
    fixed = lint(source, fix=True, min_torch="2.4").fixed_text
    assert '@torch.amp.custom_fwd(device_type="cuda")' in fixed
    assert '@torch.amp.custom_bwd(device_type="cuda")' in fixed
    assert "from torch.cuda.amp import" not in fixed


# -- TP303: the github fallback in an except branch is reported, the local load is not --------------

def test_a_local_hub_load_is_quiet_and_its_github_fallback_is_reported(lint):
    source = (
        "import os\n"
        "import torch\n"
        "def extractor(name):\n"
        "    try:\n"
        "        local = os.path.expanduser('~/.cache/torch/hub/someone_repo_main')\n"
        "        return torch.hub.load(local, name, source='local')\n"
        "    except Exception:\n"
        "        return torch.hub.load('someone/repo', name)\n"
    )
    findings = findings_of(lint, source, "TP303", min_torch="2.4", target="2.15")
    assert [f.row for f in findings] == [8]
