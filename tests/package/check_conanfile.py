#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks the Conan recipe without Conan (which cannot be installed on the CI machines).

    check_conanfile.py --root <repo> --version <x.y.z> --export-to <dir> --cache-vars <file>

The `conan` modules are replaced by small stand-ins, so this runs the recipe's own code:
set_version() must read <version>; exports_sources are copied to <dir> (tests/package then
configures, builds and installs that copy alone, as `conan create` would, with the cache
variables generate() sets, written one `-DNAME=VALUE` per line to <file>); package_info() must
describe the targets `cmake --install` exports; test_package/conanfile.py must require the
tested reference and run its program.
"""
import argparse
import fnmatch
import importlib.util
import os
import shutil
import sys
import types

recorded = {"cache_variables": {}, "requires": []}


# ---- Stand-ins for the parts of Conan 2's API the recipes use ----------------------------------
class _Component:
    def __init__(self):
        self.properties = {}
        self.requires = []
        self.libs = []
        self.defines = []
        self.system_libs = []
        self.bindirs = ["bin"]
        self.libdirs = ["lib"]
        self.components = _Components()

    def set_property(self, name, value):
        self.properties[name] = value


class _Components(dict):
    def __missing__(self, key):
        self[key] = _Component()
        return self[key]


class _Settings:
    os = "Linux"


class ConanFile:
    def __init__(self, recipe_folder):
        self.recipe_folder = recipe_folder
        self.settings = _Settings()
        self.cpp_info = _Component()
        self.tested_reference_str = "batchrpc/x.y.z"

    def requires(self, reference, **traits):
        recorded["requires"].append((reference, traits))


class CMakeToolchain:
    def __init__(self, conanfile):
        self.cache_variables = {}

    def generate(self):
        recorded["cache_variables"] = dict(self.cache_variables)


class _NoOp:
    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def _load(conanfile, path, *args, **kwargs):
    with open(path, encoding="utf-8") as f:
        return f.read()


def _install_stubs():
    modules = {
        "conan": {"ConanFile": ConanFile},
        "conan.tools": {},
        "conan.tools.build": {"check_min_cppstd": lambda *a, **k: None, "can_run": lambda *a: True},
        "conan.tools.cmake": {"CMake": _NoOp, "CMakeDeps": _NoOp, "CMakeToolchain": CMakeToolchain,
                              "cmake_layout": lambda *a, **k: None},
        "conan.tools.files": {"copy": lambda *a, **k: None, "load": _load,
                              "rmdir": lambda *a, **k: None},
        "conan.tools.layout": {"basic_layout": lambda *a, **k: None},
    }
    for name, attributes in modules.items():
        module = types.ModuleType(name)
        module.__dict__.update(attributes)
        sys.modules[name] = module


def _load_recipe(path):
    spec = importlib.util.spec_from_file_location(f"recipe_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    classes = [c for c in vars(module).values()
               if isinstance(c, type) and issubclass(c, ConanFile) and c is not ConanFile]
    if len(classes) != 1:
        raise SystemExit(f"{path}: expected one ConanFile class, found {len(classes)}")
    return classes[0](os.path.dirname(path))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--export-to", required=True)
    parser.add_argument("--cache-vars", required=True)
    args = parser.parse_args()
    problems = []
    _install_stubs()

    recipe = _load_recipe(os.path.join(args.root, "conanfile.py"))

    # set_version() parses include/batchrpc/version.hpp.
    recipe.set_version()
    if recipe.version != args.version:
        problems.append(f"set_version() gives {recipe.version!r}, CMake says {args.version!r}")

    for attribute, expected in (("name", "batchrpc"), ("package_type", "library"),
                                ("license", "MIT")):
        if getattr(recipe, attribute, None) != expected:
            problems.append(f"{attribute} is {getattr(recipe, attribute, None)!r}, expected {expected!r}")
    if set(getattr(recipe, "options", {})) != {"shared", "fPIC"}:
        problems.append(f"options are {sorted(recipe.options)}, expected fPIC and shared")

    # requirements(): RapidJSON from Conan Center, its headers visible to our users.
    recipe.requirements()
    rapidjson = [r for r in recorded["requires"] if r[0].startswith("rapidjson/")]
    if len(rapidjson) != 1 or not rapidjson[0][1].get("transitive_headers"):
        problems.append(f"requirements() must require rapidjson/... with transitive_headers=True, "
                        f"got {recorded['requires']}")

    # exports_sources: copy exactly those files, as `conan create` would.
    shutil.rmtree(args.export_to, ignore_errors=True)
    exported = []
    for directory, subdirectories, files in os.walk(args.root):
        subdirectories[:] = [d for d in subdirectories if not d.startswith(".") and d != "build"]
        for file in files:
            relative = os.path.relpath(os.path.join(directory, file), args.root).replace(os.sep, "/")
            if any(fnmatch.fnmatch(relative, pattern) for pattern in recipe.exports_sources):
                exported.append(relative)
    for relative in sorted(exported):
        target = os.path.join(args.export_to, relative)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(os.path.join(args.root, relative), target)
    for needed in ("CMakeLists.txt", "LICENSE", "src/batchrpc.cpp", "include/batchrpc/batchrpc.hpp"):
        if needed not in exported:
            problems.append(f"exports_sources does not export {needed}")
    for unwanted in ("tests/", "examples/", "bench/"):
        if any(path.startswith(unwanted) for path in exported):
            problems.append(f"exports_sources exports {unwanted}")

    # generate(): the cache variables the recipe builds with.
    recipe.generate()
    cache = recorded["cache_variables"]
    for variable in ("BATCHRPC_BUILD_TESTS", "BATCHRPC_BUILD_EXAMPLES", "BATCHRPC_BUILD_BENCH"):
        if cache.get(variable) is not False:
            problems.append(f"generate() must set {variable} to False")
    with open(args.cache_vars, "w", encoding="utf-8") as f:
        for name, value in sorted(cache.items()):
            value = ("ON" if value else "OFF") if isinstance(value, bool) else value
            f.write(f"-D{name}={value}\n")

    # package_info(): the names `cmake --install` uses.
    recipe.package_info()
    info = recipe.cpp_info
    if info.properties.get("cmake_file_name") != "batchrpc":
        problems.append("cmake_file_name must be 'batchrpc'")
    targets = {c.properties.get("cmake_target_name"): c for c in info.components.values()}
    headers = targets.get("batchrpc::batchrpc")
    compiled = targets.get("batchrpc::compiled")
    if headers is None or compiled is None:
        problems.append(f"components must provide batchrpc::batchrpc and batchrpc::compiled, "
                        f"got {sorted(filter(None, targets))}")
    else:
        if headers.libs or "rapidjson::rapidjson" not in headers.requires:
            problems.append("batchrpc::batchrpc must be header-only and require rapidjson")
        if compiled.libs != ["batchrpc_compiled"] or \
                "BATCHRPC_SEPARATE_COMPILATION" not in compiled.defines:
            problems.append("batchrpc::compiled must link batchrpc_compiled and define "
                            "BATCHRPC_SEPARATE_COMPILATION")
    if info.properties.get("cmake_target_name") in targets:
        problems.append("the root cmake_target_name must differ from every component's "
                        "(CMakeDeps links the root to all components)")

    # test_package/conanfile.py: requires what is tested, runs the program.
    recorded["requires"].clear()
    test_recipe = _load_recipe(os.path.join(args.root, "test_package", "conanfile.py"))
    test_recipe.requirements()
    if [r[0] for r in recorded["requires"]] != [test_recipe.tested_reference_str]:
        problems.append("test_package must require self.tested_reference_str only")
    for generator in ("CMakeDeps", "CMakeToolchain", "VirtualRunEnv"):
        if generator not in getattr(test_recipe, "generators", ()):
            problems.append(f"test_package lacks the {generator} generator")

    if problems:
        print("conanfile.py / test_package/conanfile.py:\n  " + "\n  ".join(problems))
        return 1
    print(f"conanfile.py: batchrpc/{recipe.version}, {len(exported)} files exported to "
          f"{args.export_to}; cache variables: {' '.join(f'{k}={v}' for k, v in sorted(cache.items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
