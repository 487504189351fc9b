// An R x C stationary-operand systolic array (weight stationary; input stationary is the same
// array with X and W exchanged), with the skew buffers on its input edges.
//
// Edges (all unskewed: the array skews them itself):
//   in_*   one item per cycle: R activations, element r for array row r. Row r is delayed by r
//          cycles, so item i, presented at cycle t, meets PE(r,c) at cycle t + r + c.
//   wl_*   one weight row per cycle for the load chain: C weights plus the row tag. Column c is
//          delayed by c cycles, matching the activation skew, so a tile loaded behind a running
//          matmul never overtakes its wavefront.
//   out_*  the bottom of each column: out_valid[c] is high in the cycle that column c's finished
//          sum for an item sits in PE(R-1,c)'s output register. Items leave column c in order,
//          so the k-th valid of a column belongs to the k-th item. De-skewing happens at
//          write-back: each column's value is written to its row's address as it leaves, and a
//          row is complete when its last used column (N-1) has been written.
//   pe_*   observation ports for waveforms and the teaching view, PE(r,c) at index r*C + c.
module array_stationary #(
    parameter int R = 4,
    parameter int C = 4,
    parameter int DW = 8,
    parameter int AW = 32,
    localparam int ROWW = R > 1 ? $clog2(R) : 1
) (
    input  logic              clk,
    input  logic              rst,
    input  logic              in_valid,
    input  logic              in_swap,     // first item of a matmul: switch to the staged tile
    input  logic [R*DW-1:0]   in_data,
    input  logic              wl_valid,
    input  logic [ROWW-1:0]   wl_row,
    input  logic [C*DW-1:0]   wl_data,
    output logic [C-1:0]      out_valid,
    output logic [C*AW-1:0]   out_data,
    output logic [R*C-1:0]    pe_a_valid,
    output logic [R*C*DW-1:0] pe_a,
    output logic [R*C*DW-1:0] pe_w,
    output logic [R*C-1:0]    pe_ps_valid,
    output logic [R*C*AW-1:0] pe_ps
);
  // Wires between PEs: index [r][c] is what enters PE(r,c); the extra column/row is what leaves
  // the right and bottom edges. The right edge's activations and the bottom of the load chain go
  // nowhere, as in a real array.
  /* verilator lint_off UNUSEDSIGNAL */
  logic a_v[R][C+1];
  logic a_s[R][C+1];
  logic signed [DW-1:0] a[R][C+1];
  logic wl_v[R+1][C];
  logic [ROWW-1:0] wl_r[R+1][C];
  logic signed [DW-1:0] wl[R+1][C];
  /* verilator lint_on UNUSEDSIGNAL */
  logic ps_v[R+1][C];
  logic signed [AW-1:0] ps[R+1][C];

  for (genvar r = 0; r < R; r++) begin : g_in_skew
    logic [DW+1:0] skewed;
    delay_line #(.WIDTH(DW + 2), .DEPTH(r)) u_skew (
        .clk(clk), .rst(rst), .d({in_valid, in_swap, in_data[r*DW +: DW]}), .q(skewed));
    assign a_v[r][0] = skewed[DW+1];
    assign a_s[r][0] = skewed[DW];
    assign a[r][0] = skewed[DW-1:0];
  end

  for (genvar c = 0; c < C; c++) begin : g_wl_skew
    logic [DW+ROWW:0] skewed;
    delay_line #(.WIDTH(DW + ROWW + 1), .DEPTH(c)) u_skew (
        .clk(clk), .rst(rst), .d({wl_valid, wl_row, wl_data[c*DW +: DW]}), .q(skewed));
    assign wl_v[0][c] = skewed[DW+ROWW];
    assign wl_r[0][c] = skewed[DW+ROWW-1:DW];
    assign wl[0][c] = skewed[DW-1:0];
    // The top row starts every column's sum at zero.
    assign ps_v[0][c] = 1'b0;
    assign ps[0][c] = '0;
  end

  for (genvar r = 0; r < R; r++) begin : g_row
    for (genvar c = 0; c < C; c++) begin : g_col
      logic signed [DW-1:0] w_active;
      pe_stationary #(.ROW(r), .ROWW(ROWW), .DW(DW), .AW(AW)) pe (
          .clk(clk), .rst(rst),
          .a_valid_in(a_v[r][c]), .a_swap_in(a_s[r][c]), .a_in(a[r][c]),
          .a_valid_out(a_v[r][c+1]), .a_swap_out(a_s[r][c+1]), .a_out(a[r][c+1]),
          .ps_in(ps[r][c]), .ps_valid_out(ps_v[r+1][c]), .ps_out(ps[r+1][c]),
          .wl_valid_in(wl_v[r][c]), .wl_row_in(wl_r[r][c]), .wl_in(wl[r][c]),
          .wl_valid_out(wl_v[r+1][c]), .wl_row_out(wl_r[r+1][c]), .wl_out(wl[r+1][c]),
          .w_active(w_active));
      // Observation: what PE(r,c) sees this cycle (its inputs) and the sum it holds.
      assign pe_a_valid[r*C + c] = a_v[r][c];
      assign pe_a[(r*C + c)*DW +: DW] = a[r][c];
      assign pe_w[(r*C + c)*DW +: DW] = w_active;
      assign pe_ps_valid[r*C + c] = ps_v[r+1][c];
      assign pe_ps[(r*C + c)*AW +: AW] = ps[r+1][c];
    end
  end

  for (genvar c = 0; c < C; c++) begin : g_out
    assign out_valid[c] = ps_v[R][c];
    assign out_data[c*AW +: AW] = ps[R][c];
  end
endmodule
