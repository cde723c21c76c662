// A real matrix of gen_matrices read back from its file (the "CLCSR01" format that gen_matrices.cpp's
// header describes): krylov_floor and bench_step read it this one way.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace cudalanczos::bench {

struct CsrFile {
  std::int64_t rows = 0, nnz = 0;
  std::vector<int> rowptr, colind;
  std::vector<double> values;
};

/// Reads `path` into A; false, with `err` saying why, where it cannot be opened or is not a complete real
/// CSR file of gen_matrices.
inline bool read_csr_file(const std::string &path, CsrFile &A, std::string &err)
{
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) return err = "cannot open " + path + " (written by gen_matrices)", false;
  char magic[8];
  std::int64_t head[3];
  bool ok = std::fread(magic, 1, 8, f) == 8 && !std::memcmp(magic, "CLCSR01\n", 8) && std::fread(head, 8, 3, f) == 3 &&
            head[0] > 0 && head[1] >= 0;
  if (ok) {
    A.rows = head[0];
    A.nnz = head[1];
    A.rowptr.resize(static_cast<std::size_t>(A.rows) + 1);
    A.colind.resize(static_cast<std::size_t>(A.nnz));
    A.values.resize(static_cast<std::size_t>(A.nnz));
    ok = std::fread(A.rowptr.data(), 4, A.rowptr.size(), f) == A.rowptr.size() &&
         std::fread(A.colind.data(), 4, A.colind.size(), f) == A.colind.size() &&
         std::fread(A.values.data(), 8, A.values.size(), f) == A.values.size();
  }
  std::fclose(f);
  if (!ok) err = path + " is not a complete CSR file of gen_matrices";
  return ok;
}

} // namespace cudalanczos::bench
