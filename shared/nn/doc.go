// Package nn is the forecasting model of spec §4: a multilayer perceptron
// H → 128 → 64 → 32 → 1 with ReLU after every hidden layer and a linear
// output, trained on the mean squared error by full-batch Adam, with the
// semantics of PyTorch's nn.Linear, nn.MSELoss and torch.optim.Adam. The
// Trainer computes in float32, as PyTorch (and the paper) train; the
// parameters, batches and results the caller sees are float64, and
// MLP.Predict evaluates in float64.
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
// torch.optim.Adam's single-tensor update operation for operation on float32
// tensors (lerp for m, addcmul for v, addcdiv for p; the per-step constants
// computed in float64 and rounded to float32, as torch rounds Python
// floats) but for the denominator: √v·(1/√(1−β2ᵗ)) + ε with the reciprocal
// rounded once per step, where torch divides by √(1−β2ᵗ) (the last bit of
// the denominator may differ; one division fewer per parameter, about a
// tenth of a client round). β^t may differ from Python's in the last bit
// (math.Pow versus C pow). Train returns the loss measured at the
// start of its last step.
//
// # Precision
//
// Train, Gradient and Loss convert the parameters and the batch to float32
// once per call, run every step in float32 (forward pass, back-propagation,
// weight and bias gradients, Adam's moments and update; m and v are float32
// within one call) and write float64(p32) back, so after a Train every
// parameter is a float32 value. Adam (for DP-SGD) keeps its moments in
// float32 between steps and reproduces Train bit for bit. Everything outside
// the Trainer (evaluation, aggregation, clipping, noise, the wire format)
// stays float64. Against a float64 implementation of the same round
// (reference_test.go) the paper's network's update differs by about 1e-6
// relative (TestFloat32NearFloat64 bounds it by 1e-4).
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
//     Go rounds every float32 operation to single precision on every GOARCH,
//     the kernels fix the summation order and forbid fused multiply-add, and
//     square roots are float32(math.Sqrt(float64(x))), the correctly
//     rounded single-precision root (VSQRTPS). MLP.Predict (float64) agrees
//     with the Trainer's forward pass to float32 accuracy, not bit for bit.
//   - Every sum of products is sequential: it starts at +0 and adds one
//     rounded product at a time in index order (a layer's bias is added
//     after its sum). A zero product then never changes a sum, so the
//     scalar kernels skip zero activations and deltas (ReLU zeroes about
//     half of them) and the vector kernels multiply densely, with the same
//     bits. The one exception is non-finite values: a zero activation times
//     an infinite weight contributes 0 when skipped and NaN when multiplied.
//     Such a round has already diverged (its update is not finite either
//     way and the aggregator rejects it), but its bits may differ between
//     the dense and the sparse kernels.
//
// # Speed
//
// The scalar float32 kernels (kernels32.go; WebAssembly and builds without
// GOEXPERIMENT=simd) add four scaled rows at once, skipping zero
// activations and deltas, so they do roughly half the multiply-adds of a
// dense implementation; the float64 kernels of MLP.Predict (kernels.go) do
// the same. One client round (30 steps, 13 windows, 10-128-64-32-1) takes
// about 3.9 ms natively with the scalar float32 kernels and 9.8 ms in node's
// WebAssembly (PyTorch, one thread: 10.8 ms), with no allocation after the
// first call. Benchmarks: bench_test.go and docs/benchmarks.md.
//
// # SIMD (GOEXPERIMENT=simd, amd64)
//
// Built with GOEXPERIMENT=simd on amd64, the package also compiles vector
// kernels and picks them at run time: AVX-512 when the CPU has it, else
// AVX2; every other build, WebAssembly included, compiles only the scalar
// kernels (kernels_generic.go dispatches to them). The Trainer then runs
// the forward pass of batches up to 256 samples feature-major (one row of
// the batch rounded up to 16 per unit; train_avx512_amd64.go), reading the
// weights as they lie in the parameters, and back-propagation and the
// weight gradient sample-major; the three products of a step are one
// routine, gemm: on AVX-512 in assembly (gemm_avx512_amd64.s: float32, four
// rows × 32 columns in registers, masked 16-lane tails, VMULPS then VADDPS,
// never VFMADD, ReLU or the ReLU derivative applied before the store), on
// AVX2 in archsimd Float32x8 with the same contract (gemm_avx2_amd64.go).
// Adam and the bias sums run on archsimd Float32x16 (AVX-512) or Float32x8
// (AVX2). Each lane performs the scalar kernel's own sequence of rounded
// single-precision operations for one output element, in the same order;
// by the sequential-sum rule above the dense products equal the sparse ones
// bit for bit. MLP.Predict uses float64 AVX2/AVX-512 row kernels
// (kernels_simd_amd64.go, kernels_avx512_amd64.go). kernels_simd_test.go
// and gemm_avx512_test.go compare scalar, AVX2 and AVX-512 on random and
// awkward shapes and values (signed zeros, subnormals, Inf, NaN), and
// TestGolden pins the same hash in every build. Figures: bench_test.go and
// docs/benchmarks.md.
package nn
