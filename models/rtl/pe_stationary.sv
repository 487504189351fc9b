// One processing element of a stationary-operand array (weight stationary, and input stationary,
// which is the same hardware with the roles of X and W exchanged).
//
// PE(ROW, c) keeps one operand in a register plane and, every cycle,
//   - takes an activation `a` from its left neighbour and passes it right one cycle later,
//   - takes a partial sum from the PE above, adds a * w_active, and passes it down.
//
// Two weight planes (double buffering): the "active" plane feeds the multiplier while the
// "shadow" plane is written by the load chain. A matmul's first item carries `swap`; as that item
// passes, the PE flips planes, so the switch moves through the array with the wavefront and no PE
// ever mixes two tiles inside one matmul.
//
// Weight loading: weight rows travel down the load chain, each tagged with the row it belongs to;
// the PE whose ROW matches copies the value into its shadow plane. The controller feeds the
// bottom row first, so every row of column c lands in the same cycle (see README.md).
module pe_stationary #(
    parameter int ROW = 0,    // this PE's row: which tagged weight it keeps
    parameter int ROWW = 1,   // bits of a row tag
    parameter int DW = 8,     // operand width (int8)
    parameter int AW = 32     // partial-sum width (int32)
) (
    input  logic                 clk,
    input  logic                 rst,
    // activation from the left, registered on to the right
    input  logic                 a_valid_in,
    input  logic                 a_swap_in,
    input  logic signed [DW-1:0] a_in,
    output logic                 a_valid_out,
    output logic                 a_swap_out,
    output logic signed [DW-1:0] a_out,
    // partial sum from above, registered on downwards
    input  logic signed [AW-1:0] ps_in,
    output logic                 ps_valid_out,
    output logic signed [AW-1:0] ps_out,
    // weight load chain from above, registered on downwards
    input  logic                 wl_valid_in,
    input  logic [ROWW-1:0]      wl_row_in,
    input  logic signed [DW-1:0] wl_in,
    output logic                 wl_valid_out,
    output logic [ROWW-1:0]      wl_row_out,
    output logic signed [DW-1:0] wl_out,
    // the active weight, for waveforms and the teaching view
    output logic signed [DW-1:0] w_active
);
  logic signed [DW-1:0] plane[2];
  logic sel;  // which plane is active

  // The first item of a matmul already multiplies with the new plane.
  wire swap_now = a_valid_in && a_swap_in;
  wire use_sel = swap_now ? !sel : sel;
  assign w_active = plane[use_sel];

  always_ff @(posedge clk) begin
    if (rst) begin
      a_valid_out <= 1'b0;
      a_swap_out <= 1'b0;
      a_out <= '0;
      ps_valid_out <= 1'b0;
      ps_out <= '0;
      wl_valid_out <= 1'b0;
      wl_row_out <= '0;
      wl_out <= '0;
      plane[0] <= '0;
      plane[1] <= '0;
      sel <= 1'b0;
    end else begin
      a_valid_out <= a_valid_in;
      a_swap_out <= a_swap_in;
      a_out <= a_in;
      // Bubbles (a_valid_in = 0) still flow, with a = 0; their sums are never marked valid.
      ps_valid_out <= a_valid_in;
      ps_out <= ps_in + a_in * w_active;
      wl_valid_out <= wl_valid_in;
      wl_row_out <= wl_row_in;
      wl_out <= wl_in;
      sel <= use_sel;
      // Write the plane that is not active after this cycle (the old one when swapping now).
      if (wl_valid_in && wl_row_in == ROWW'(ROW)) plane[!use_sel] <= wl_in;
    end
  end
endmodule
