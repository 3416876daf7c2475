// Package nn is the forecasting model of spec §4: a multilayer perceptron
// H → 128 → 64 → 32 → 1 with ReLU after every hidden layer and a linear
// output, trained on the mean squared error by full-batch Adam, with the
// semantics of PyTorch's nn.Linear, nn.MSELoss and torch.optim.Adam in
// float64.
//
// # Parameters
//
// The model's parameters are one flat []float64 owned by the caller (the
// unit DP-FedAvg clips, averages and noises). For each layer l = 1…L in
// order, with s_0 inputs and s_L outputs, it holds the weight matrix W_l
// (s_l rows × s_{l−1} columns, row-major: W_l[j][k] multiplies input k of
// output j), then the bias b_l (s_l values). NewMLP(10, 128, 64, 32, 1) has
//
//	W1 [0, 1280)   b1 [1280, 1408)   W2 [1408, 9600)   b2 [9600, 9664)
//	W3 [9664, 11712)   b3 [11712, 11744)   W4 [11744, 11776)   b4 [11776]
//
// 11 777 parameters, the order and shapes of PyTorch's state_dict for
// nn.Sequential(Linear, ReLU, …, Linear) flattened. Init draws every weight
// and bias of layer l from U(−1/√s_{l−1}, 1/√s_{l−1}), PyTorch's default.
//
// # Data
//
// A batch of n samples is x, n×s_0 row-major (sample s is x[s·s_0:(s+1)·s_0]),
// with targets or outputs n×s_L. The loss is
//
//	MSE = (1/(n·s_L)) Σ_s Σ_j (ŷ_sj − y_sj)²
//
// and ∂MSE/∂ŷ = 2(ŷ − y)/(n·s_L), as torch computes it. The derivative of
// ReLU at exactly 0 is taken as 0, as in PyTorch. Units: whatever the caller
// feeds (the spec feeds raw smoothed case counts).
//
// # Training
//
// Trainer.Train runs full-batch Adam from a fresh state (m = v = 0), the
// optimiser of spec §4 (lr 0.001, 30 steps per round). Each step repeats
// torch.optim.Adam's single-tensor update operation for operation (lerp for
// m, addcmul for v, denominator √v/√(1−β2ᵗ) + ε, addcdiv for p); only
// β^t may differ from Python's in the last bit (math.Pow versus C pow).
// Train returns the loss measured at the start of its last step.
//
// # Conventions
//
//   - Functions never keep or modify their inputs, except Init and Train
//     which write dst and params; results go into caller-supplied dst slices.
//   - Wrong slice lengths and invalid options are programmer errors and panic
//     with a message starting "nn: ".
//   - An MLP is immutable and safe for concurrent use. A Trainer holds
//     workspace (sized lazily for the largest batch seen, then reused with no
//     allocation) and is NOT safe for concurrent use: one per goroutine.
//   - Results are deterministic and bit-identical on every platform, native
//     and GOOS=js GOARCH=wasm alike, scalar, AVX2 and AVX-512 kernels alike:
//     the kernels fix the summation order and forbid fused multiply-add.
//     MLP.Predict returns the same bits as the Trainer's forward pass.
//   - Every sum of products is sequential: it starts at +0 and adds one
//     rounded product at a time in index order (a layer's bias is added
//     after its sum). A zero product then never changes a sum, so the
//     scalar kernels skip zero activations and deltas (ReLU zeroes about
//     half of them) and the AVX-512 kernels multiply densely, with the same
//     bits. The one exception is non-finite values: a zero activation times
//     an infinite weight contributes 0 when skipped and NaN when multiplied.
//     Such a round has already diverged (its update is not finite either
//     way and the aggregator rejects it), but its bits may differ between
//     the dense and the sparse kernels.
//
// # Speed
//
// The arithmetic is hand-written flat loops (kernels.go): each pass adds four
// scaled rows at once (one after the other), skipping zero activations in
// the forward pass and zero deltas in the backward pass, so it does roughly
// half the multiply-adds of a dense implementation. Benchmarks
// (bench_test.go) compare it with a dense implementation on gonum's BLAS.
// One client round (30 steps, 13 windows, 10-128-64-32-1) takes about
// 3–3.5 ms natively with these scalar loops and 11–16 ms in node's
// WebAssembly (PyTorch, one thread: 10.8 ms), with no allocation after the
// first call.
//
// # SIMD (GOEXPERIMENT=simd, amd64)
//
// Built with GOEXPERIMENT=simd on amd64, the package also compiles vector
// versions of the kernels on Go's experimental simd/archsimd and picks them
// at run time: AVX-512 (kernels_avx512_amd64.go) when the CPU has it, else
// AVX2 (kernels_simd_amd64.go); every other build, WebAssembly included,
// compiles only the scalar kernels (kernels_generic.go dispatches to them).
// Each lane performs the scalar kernel's own sequence of rounded
// multiplications and additions for one output element, in the same order,
// without fused multiply-add; square roots and divisions are the correctly
// rounded VSQRTPD and VDIVPD. The AVX2 kernels vectorise the sparse row
// additions four outputs wide. The AVX-512 kernels compute each layer as
// dense small matrix products (four samples or four weight rows per pass,
// 16 outputs in registers, so each load serves four products) and the Adam
// update eight parameters per vector; by the sequential-sum rule above the
// dense products equal the sparse ones bit for bit. On AVX-512 the Trainer
// runs the forward pass of batches up to 24 samples feature-major
// (train_avx512_amd64.go), reading the weights as they lie in params, so
// the per-step transpose of the weights is gone there. On AVX-512 the three
// products of a step (forward, back-propagation, weight gradient) are one
// assembly routine, gemmAVX512 (gemm_avx512_amd64.s: four rows × 16
// columns in registers, masked tails, VMULPD then VADDPD, never VFMADD,
// ReLU or the ReLU derivative applied before the store), and the copy of
// the activations to sample-major is a register transpose
// (transpose_avx512_amd64.s); the .s files carry the same build
// constraint. kernels_simd_test.go and gemm_avx512_test.go compare scalar,
// AVX2, AVX-512 and the assembly on random and awkward shapes and values
// (signed zeros, subnormals, Inf, NaN), and TestGolden pins the same hash
// in every build. Figures: bench_test.go and docs/benchmarks.md.
package nn
