#include "calib/cuda/nccl_bench.h"

#include <cuda_runtime.h>
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>

#ifdef TRAINSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace trainsim::calib {
namespace {

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

#define NCCL_TRY(call)                                                                  \
  do {                                                                                  \
    ncclResult_t r_ = (call);                                                           \
    if (r_ != ncclSuccess) return std::string(#call ": ") + ncclGetErrorString(r_);     \
  } while (0)
#define CUDA_TRY(call)                                                                  \
  do {                                                                                  \
    cudaError_t e_ = (call);                                                            \
    if (e_ != cudaSuccess) return std::string(#call ": ") + cudaGetErrorString(e_);     \
  } while (0)

// The GPUs this process drives: device, communicator, stream, buffers.
struct Local {
  int device = 0, rank = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* send = nullptr;
  float* recv = nullptr;
};

// One collective on every local GPU, grouped (required when one thread drives several).
std::string Launch(const std::string& op, std::vector<Local>& locals, int nranks, size_t count) {
  NCCL_TRY(ncclGroupStart());
  for (auto& l : locals) {
    const size_t chunk = count / nranks;
    if (op == "all-reduce") {
      NCCL_TRY(ncclAllReduce(l.send, l.recv, count, ncclFloat, ncclSum, l.comm, l.stream));
    } else if (op == "all-gather") {
      NCCL_TRY(ncclAllGather(l.send, l.recv, chunk, ncclFloat, l.comm, l.stream));
    } else if (op == "reduce-scatter") {
      NCCL_TRY(ncclReduceScatter(l.send, l.recv, chunk, ncclFloat, ncclSum, l.comm, l.stream));
    } else if (op == "send-recv") {  // pairs (0,1), (2,3), ...: each sends its buffer to its peer
      const int peer = l.rank ^ 1;
      if (peer < nranks) {
        NCCL_TRY(ncclSend(l.send, count, ncclFloat, peer, l.comm, l.stream));
        NCCL_TRY(ncclRecv(l.recv, count, ncclFloat, peer, l.comm, l.stream));
      }
    } else {  // all-to-all
      for (int p = 0; p < nranks; ++p) {
        NCCL_TRY(ncclSend(l.send + p * chunk, chunk, ncclFloat, p, l.comm, l.stream));
        NCCL_TRY(ncclRecv(l.recv + p * chunk, chunk, ncclFloat, p, l.comm, l.stream));
      }
    }
  }
  NCCL_TRY(ncclGroupEnd());
  return "";
}

std::string SyncAll(std::vector<Local>& locals, bool use_mpi) {
  for (auto& l : locals) {
    CUDA_TRY(cudaSetDevice(l.device));
    CUDA_TRY(cudaStreamSynchronize(l.stream));
  }
#ifdef TRAINSIM_HAVE_MPI
  if (use_mpi) MPI_Barrier(MPI_COMM_WORLD);
#else
  (void)use_mpi;
#endif
  return "";
}

}  // namespace

std::string RunNcclBenchmarks(const std::vector<double>& sizes_bytes, bool use_mpi, std::vector<NcclSample>& out,
                              bool& is_root) {
  std::vector<Local> locals;
  int nranks = 0;
  std::string scope = "intra-node";
  is_root = true;
  const size_t max_count = size_t(*std::max_element(sizes_bytes.begin(), sizes_bytes.end()) / sizeof(float));
  if (use_mpi) {
#ifdef TRAINSIM_HAVE_MPI
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    is_root = rank == 0;
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    std::vector<char> all(256 * size_t(nranks));
    MPI_Allgather(host, 256, MPI_CHAR, all.data(), 256, MPI_CHAR, MPI_COMM_WORLD);
    std::set<std::string> hosts;
    int local_index = 0;
    for (int r = 0; r < nranks; ++r) {
      hosts.insert(std::string(&all[256 * size_t(r)]));
      if (r < rank && std::strcmp(&all[256 * size_t(r)], host) == 0) ++local_index;
    }
    if (hosts.size() > 1) scope = "inter-node";
    int devices = 0;
    CUDA_TRY(cudaGetDeviceCount(&devices));
    if (devices == 0) return "no CUDA device on " + std::string(host);
    ncclUniqueId id;
    if (rank == 0) NCCL_TRY(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    Local l;
    l.device = local_index % devices;  // one rank per GPU
    l.rank = rank;
    CUDA_TRY(cudaSetDevice(l.device));
    NCCL_TRY(ncclCommInitRank(&l.comm, nranks, id, rank));
    locals.push_back(l);
#else
    return "built without MPI: run the collectives in one process (intra-node) instead";
#endif
  } else {
    CUDA_TRY(cudaGetDeviceCount(&nranks));
    if (nranks < 2) return "NCCL collectives need at least two GPUs (found " + std::to_string(nranks) + ")";
    std::vector<ncclComm_t> comms(nranks);
    std::vector<int> devs(nranks);
    for (int i = 0; i < nranks; ++i) devs[i] = i;
    NCCL_TRY(ncclCommInitAll(comms.data(), nranks, devs.data()));
    for (int i = 0; i < nranks; ++i) locals.push_back(Local{i, i, comms[i]});
  }
  for (auto& l : locals) {
    CUDA_TRY(cudaSetDevice(l.device));
    CUDA_TRY(cudaStreamCreate(&l.stream));
    CUDA_TRY(cudaMalloc(&l.send, (max_count + nranks) * sizeof(float)));
    CUDA_TRY(cudaMalloc(&l.recv, (max_count + nranks) * sizeof(float)));
    CUDA_TRY(cudaMemset(l.send, 0, (max_count + nranks) * sizeof(float)));
  }
  std::string err;
  for (const char* op : {"all-reduce", "all-gather", "reduce-scatter", "send-recv", "all-to-all"}) {
    for (double size : sizes_bytes) {
      const size_t count = std::max<size_t>(nranks, size_t(size / sizeof(float)) / nranks * nranks);
      double best = 1e30;
      for (int rep = 0; rep < 6 && err.empty(); ++rep) {  // the first is a warm-up
        if (!(err = SyncAll(locals, use_mpi)).empty()) break;
        const double t0 = Now();
        if (!(err = Launch(op, locals, nranks, count)).empty()) break;
        if (!(err = SyncAll(locals, use_mpi)).empty()) break;
        if (rep > 0) best = std::min(best, Now() - t0);
      }
      if (!err.empty()) break;
      if (is_root) out.push_back(NcclSample{op, scope, nranks, double(count * sizeof(float)), best});
    }
  }
  for (auto& l : locals) {
    cudaSetDevice(l.device);
    cudaFree(l.send);
    cudaFree(l.recv);
    cudaStreamDestroy(l.stream);
    ncclCommDestroy(l.comm);
  }
  return err;
}

}  // namespace trainsim::calib
