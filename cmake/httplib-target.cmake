# SPDX-License-Identifier: MIT
# Makes cpp-httplib available as the target httplib::httplib: the HTTP client of batchrpc's
# end-to-end and stress tests (a client we did not write). Not installed.
#
#   upstream cpp-httplib's CMake package   defines httplib::httplib itself
#   pkg-config module cpp-httplib          Debian's libcpp-httplib-dev (compiled, no CMake package)
#
# The target made here is IMPORTED and local to the including directory, so a project that
# vendors batchrpc never sees it. Finding nothing is not an error: the caller checks
# `TARGET httplib::httplib`.

if(NOT TARGET httplib::httplib)
  find_package(httplib CONFIG QUIET)
endif()
if(NOT TARGET httplib::httplib)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(BATCHRPC_HTTPLIB QUIET IMPORTED_TARGET cpp-httplib)
    if(TARGET PkgConfig::BATCHRPC_HTTPLIB)
      add_library(httplib::httplib INTERFACE IMPORTED)
      set_property(TARGET httplib::httplib PROPERTY
                   INTERFACE_LINK_LIBRARIES PkgConfig::BATCHRPC_HTTPLIB)
    endif()
  endif()
endif()
