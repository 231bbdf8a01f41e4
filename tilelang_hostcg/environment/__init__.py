# isort: skip_file
"""What the environment holds, read without judging plugins: installed metadata (read without
waiting), the TileLang and TVM that ``import`` gives, targets, requirement verdicts and advice
that fits how a thing was installed. Imports only :mod:`..core`.

Its front door: the names below are what other layers may use, each loaded from its module on
first access; no module outside this folder imports one of its private modules."""

from __future__ import annotations

from ..core import FrontDoor

# Not ``typing.TYPE_CHECKING``: the door stays as cheap as the modules it opens. Type checkers read it as True.
TYPE_CHECKING = False
if TYPE_CHECKING:  # explicit re-exports, for type checkers
    from ._advice import (
        FFI as FFI,
        first_party_install_as_installed as first_party_install_as_installed,
        foreign_tvm as foreign_tvm,
        installed_version as installed_version,
        reinstall_as_installed as reinstall_as_installed,
        tilelang_repair as tilelang_repair,
        unmet_requirement as unmet_requirement,
    )
    from ._builds import tilelang_overlap as tilelang_overlap
    from ._compiler import (
        describe_tvm as describe_tvm,
        get_global_func as get_global_func,
        provider_versions as provider_versions,
        tvm_document as tvm_document,
        tvm_info as tvm_info,
    )
    from ._direct_url import pip_source as pip_source
    from ._finding import (
        Found as Found,
        find as find,
        has_module as has_module,
        import_tilelang as import_tilelang,
        import_tvm as import_tvm,
    )
    from ._importing import is_initializing as is_initializing
    from ._kinds import canonical_kind as canonical_kind, kind_spellings as kind_spellings
    from ._metadata import (
        FOLDER as FOLDER,
        direct_url as direct_url,
        distribution_name as distribution_name,
        distribution_version as distribution_version,
        editable_source as editable_source,
        file_finding as file_finding,
        file_kind as file_kind,
        files_finding as files_finding,
        folder_of as folder_of,
        folder_problems as folder_problems,
        installed_at as installed_at,
        metadata_file_path as metadata_file_path,
        read_file as read_file,
        unreadable_finding as unreadable_finding,
        unusable_finding as unusable_finding,
    )
    from ._requirements import (
        applicable as applicable,
        check_requirements as check_requirements,
        other_build_requirements as other_build_requirements,
        relevant_requires as relevant_requires,
    )
    from ._targets import (
        DEVICE_KIND as DEVICE_KIND,
        GlobalFuncBuild as GlobalFuncBuild,
        UNKNOWN_KIND as UNKNOWN_KIND,
        closure_global_func as closure_global_func,
        default_host as default_host,
        global_func_host_codegen as global_func_host_codegen,
        host_of as host_of,
        is_host_target as is_host_target,
        kind_misfit as kind_misfit,
        parse_target as parse_target,
        required_global_funcs as required_global_funcs,
    )
    from ._tilelang_layout import holds_tilelang_layout as holds_tilelang_layout

_DOOR = FrontDoor(__name__, {
    "_advice": ("FFI", "first_party_install_as_installed", "foreign_tvm", "installed_version",
                "reinstall_as_installed", "tilelang_repair", "unmet_requirement"),
    "_builds": ("tilelang_overlap",),
    "_compiler": ("describe_tvm", "get_global_func", "provider_versions", "tvm_document", "tvm_info"),
    "_direct_url": ("pip_source",),
    "_finding": ("Found", "find", "has_module", "import_tilelang", "import_tvm"),
    "_importing": ("is_initializing",),
    "_kinds": ("canonical_kind", "kind_spellings"),
    "_metadata": ("FOLDER", "direct_url", "distribution_name", "distribution_version", "editable_source",
                  "file_finding", "file_kind", "files_finding", "folder_of", "folder_problems", "installed_at",
                  "metadata_file_path", "read_file", "unreadable_finding", "unusable_finding"),
    "_requirements": ("applicable", "check_requirements", "other_build_requirements", "relevant_requires"),
    "_targets": ("DEVICE_KIND", "GlobalFuncBuild", "UNKNOWN_KIND", "closure_global_func", "default_host",
                 "global_func_host_codegen", "host_of", "is_host_target", "kind_misfit", "parse_target",
                 "required_global_funcs"),
    "_tilelang_layout": ("holds_tilelang_layout",),
})
__all__ = _DOOR.names


def __getattr__(name: str) -> object:
    return _DOOR.open(name, globals())


def __dir__() -> list[str]:
    return list(__all__)
