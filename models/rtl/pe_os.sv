// One processing element of an output-stationary array.
//
// PE(r,c) owns output Y[r][c] of the current fold. Every cycle it takes X[r][k] from the left
// and W[k][c] from above, passes both on one cycle later, and adds their product to its
// accumulator. The item with k = 0 carries `first`, which restarts the sum, so a new fold can
// start flowing in while the previous fold's results are still being shifted out.
//
// Two result registers (double buffering): `acc` accumulates, `res` holds a finished fold on its
// way out. When the array captures (`cap`), every `res` takes the `acc` of the PE below, and the
// top row's `acc` goes straight to the output; on `shift` the `res` values move up one row. A fold
// of rf rows therefore leaves through the top edge in rf cycles, row 0 first.
module pe_os #(
    parameter int DW = 8,
    parameter int AW = 32
) (
    input  logic                 clk,
    input  logic                 rst,
    input  logic                 a_valid_in,
    input  logic                 a_first_in,
    input  logic signed [DW-1:0] a_in,
    output logic                 a_valid_out,
    output logic                 a_first_out,
    output logic signed [DW-1:0] a_out,
    input  logic signed [DW-1:0] b_in,
    output logic signed [DW-1:0] b_out,
    // result shift chain, moving up
    input  logic                 cap,
    input  logic                 shift,
    input  logic signed [AW-1:0] up_in,   // from the PE below (0 under the bottom row)
    output logic signed [AW-1:0] up_out,  // to the PE above (or the output, in the top row)
    output logic                 acc_valid,  // acc changed in the previous cycle
    output logic signed [AW-1:0] acc
);
  logic signed [AW-1:0] res;
  // A separate signed wire: an unsized '0 inside the sum would make the whole expression
  // unsigned, and the int8 operands would then be zero-extended instead of sign-extended.
  logic signed [AW-1:0] base;
  assign base = a_first_in ? '0 : acc;

  // Capture hands the finished sum on directly; afterwards the copy in `res` moves.
  assign up_out = cap ? acc : res;

  always_ff @(posedge clk) begin
    if (rst) begin
      a_valid_out <= 1'b0;
      a_first_out <= 1'b0;
      a_out <= '0;
      b_out <= '0;
      acc_valid <= 1'b0;
      acc <= '0;
      res <= '0;
    end else begin
      a_valid_out <= a_valid_in;
      a_first_out <= a_first_in;
      a_out <= a_in;
      b_out <= b_in;
      acc_valid <= a_valid_in;
      if (a_valid_in) acc <= base + a_in * b_in;
      if (cap || shift) res <= up_in;
    end
  end
endmodule
