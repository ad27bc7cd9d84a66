"""The embedded model loads its weights into plain CPU buffers where the CPU advertises AMX:
llama.cpp's AMX kernel died with SIGSEGV (ldtilecfg) in a VM listing amx_tile without enabling it."""

from __future__ import annotations

import pytest

from evalcore.models import _local

llama_module = pytest.importorskip("llama_cpp.llama")


@pytest.mark.parametrize(("flags", "extra"), [("avx2 amx_tile amx_int8", False), ("avx2", True)])
def test_extra_buffers_are_off_only_where_amx_is_listed(tmp_path, monkeypatch, flags, extra) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"flags\t\t: fpu {flags}\n")
    monkeypatch.setattr(_local, "_CPUINFO", cpuinfo)
    original = llama_module.llama_cpp.llama_model_default_params
    with _local._plain_weight_buffers():
        assert bool(llama_module.llama_cpp.llama_model_default_params().use_extra_bufts) is extra
    assert llama_module.llama_cpp.llama_model_default_params is original  # restored after the load


def test_the_environment_keeps_llama_cpps_choice(tmp_path, monkeypatch) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("flags\t\t: amx_tile\n")
    monkeypatch.setattr(_local, "_CPUINFO", cpuinfo)
    monkeypatch.setenv(_local.EXTRA_BUFFERS_ENV, "1")
    with _local._plain_weight_buffers():
        assert llama_module.llama_cpp.llama_model_default_params().use_extra_bufts
