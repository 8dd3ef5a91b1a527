# SPDX-License-Identifier: MIT
# Conan 2 recipe for batchrpc, kept in the repository (conan create . ; conan create . -o
# batchrpc/*:shared=True). It builds the compiled variant with the project's own CMakeLists.txt
# (tests, examples and benchmarks off) and describes both targets that `cmake --install` exports:
#   batchrpc::batchrpc   header-only (the bodies are compiled inline in the user's code)
#   batchrpc::compiled   the compiled library (static, or shared with -o batchrpc/*:shared=True)
# Conan cannot be installed on the project's CI machines: there, tests/package builds
# test_package/ with plain CMake against `cmake --install` output, and checks this file's
# version parsing and sources.
import os
import re

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout
from conan.tools.files import copy, load, rmdir

required_conan_version = ">=2.0"


class BatchrpcConan(ConanFile):
    name = "batchrpc"
    description = "JSON-RPC 2.0 batch router for C++20 on RapidJSON (header-mostly)"
    license = "MIT"
    topics = ("json-rpc", "jsonrpc", "rpc", "batch", "rapidjson", "header-only")
    package_type = "library"
    settings = "os", "arch", "compiler", "build_type"
    options = {"shared": [True, False], "fPIC": [True, False]}
    default_options = {"shared": False, "fPIC": True}
    # Exactly what the library's build needs: no tests, examples or benchmarks.
    exports_sources = "CMakeLists.txt", "cmake/*", "include/*", "src/*", "LICENSE"

    def set_version(self):
        # The version lives in include/batchrpc/version.hpp, which CMake parses too.
        header = load(self, os.path.join(self.recipe_folder, "include", "batchrpc", "version.hpp"))
        parts = []
        for part in ("MAJOR", "MINOR", "PATCH"):
            match = re.search(rf"^\s*#\s*define\s+BATCHRPC_VERSION_{part}\s+(\d+)", header, re.M)
            if not match:
                raise ValueError(f"no BATCHRPC_VERSION_{part} in include/batchrpc/version.hpp")
            parts.append(match.group(1))
        self.version = ".".join(parts)

    def config_options(self):
        if self.settings.os == "Windows":
            del self.options.fPIC

    def configure(self):
        if self.options.shared:
            self.options.rm_safe("fPIC")

    def layout(self):
        cmake_layout(self, src_folder=".")

    def requirements(self):
        # Public headers include RapidJSON's.
        self.requires("rapidjson/cci.20250205", transitive_headers=True)

    def validate(self):
        check_min_cppstd(self, 20)

    def generate(self):
        tc = CMakeToolchain(self)
        tc.cache_variables["BATCHRPC_BUILD_TESTS"] = False
        tc.cache_variables["BATCHRPC_BUILD_EXAMPLES"] = False
        tc.cache_variables["BATCHRPC_BUILD_BENCH"] = False
        tc.cache_variables["BATCHRPC_INSTALL"] = True
        # Dependencies come from Conan only: no downloads.
        tc.cache_variables["BATCHRPC_FETCH_DEPS"] = False
        # Nor the network transports (they would need Boost from Conan; <batchrpc/net.hpp> is
        # packaged for header-only use with your own Boost).
        tc.cache_variables["BATCHRPC_NET"] = False
        tc.generate()
        CMakeDeps(self).generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def package(self):
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        cmake = CMake(self)
        cmake.install()
        # Conan's generators describe the package: drop the project's own CMake and pkg-config
        # files and the licence copy under share/.
        rmdir(self, os.path.join(self.package_folder, "lib", "cmake"))
        rmdir(self, os.path.join(self.package_folder, "lib", "pkgconfig"))
        rmdir(self, os.path.join(self.package_folder, "share"))

    def package_info(self):
        # find_package(batchrpc) as with an installed batchrpc. CMakeDeps also makes a target
        # for the root that links every component: batchrpc::all.
        self.cpp_info.set_property("cmake_file_name", "batchrpc")
        self.cpp_info.set_property("cmake_target_name", "batchrpc::all")
        self.cpp_info.set_property("pkg_config_name", "batchrpc-all")

        # Header-only: the same batchrpc::batchrpc as `cmake --install` exports.
        headers = self.cpp_info.components["headers"]
        headers.set_property("cmake_target_name", "batchrpc::batchrpc")
        headers.set_property("pkg_config_name", "batchrpc")
        headers.requires = ["rapidjson::rapidjson"]
        headers.bindirs = []
        headers.libdirs = []
        if self.settings.os in ("Linux", "FreeBSD"):
            headers.system_libs = ["pthread"]  # rpc::ThreadPool

        # The compiled variant: every translation unit must see BATCHRPC_SEPARATE_COMPILATION.
        compiled = self.cpp_info.components["compiled"]
        compiled.set_property("cmake_target_name", "batchrpc::compiled")
        compiled.set_property("pkg_config_name", "batchrpc-compiled")
        compiled.libs = ["batchrpc_compiled"]
        compiled.defines = ["BATCHRPC_SEPARATE_COMPILATION"]
        compiled.requires = ["headers"]
