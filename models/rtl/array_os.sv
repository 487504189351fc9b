// An R x C output-stationary systolic array with its input skew and its result shift-out.
//
// Edges (unskewed; the array skews them):
//   in_*   one step k per cycle: element r is X[r][k] for array row r, delayed by r cycles.
//   w_*    the same step's weights: element c is W[k][c], delayed by c cycles. Step k's two
//          operands therefore meet in PE(r,c) at cycle t + r + c.
//   cap    one cycle, no earlier than the cycle in which the fold's last PE holds its final sum:
//          all sums move into the result registers and row 0 goes out.
//   shift  the following rf - 1 cycles: the next rows go out, one per cycle.
//   out_*  registered: out_valid is high in the cycle after a row was sent, with that row.
//   pe_*   observation ports for waveforms and the teaching view, PE(r,c) at index r*C + c.
module array_os #(
    parameter int R = 4,
    parameter int C = 4,
    parameter int DW = 8,
    parameter int AW = 32
) (
    input  logic              clk,
    input  logic              rst,
    input  logic              in_valid,
    input  logic              in_first,   // step k = 0: restart the sums
    input  logic [R*DW-1:0]   in_data,
    input  logic [C*DW-1:0]   w_data,
    input  logic              cap,
    input  logic              shift,
    output logic              out_valid,
    output logic [C*AW-1:0]   out_data,
    output logic [R*C-1:0]    pe_a_valid,
    output logic [R*C*DW-1:0] pe_a,
    output logic [R*C*DW-1:0] pe_w,
    output logic [R*C-1:0]    pe_ps_valid,
    output logic [R*C*AW-1:0] pe_ps
);
  // The right and bottom edges' operands go nowhere, as in a real array.
  /* verilator lint_off UNUSEDSIGNAL */
  logic a_v[R][C+1];
  logic a_f[R][C+1];
  logic signed [DW-1:0] a[R][C+1];
  logic signed [DW-1:0] b[R+1][C];
  /* verilator lint_on UNUSEDSIGNAL */
  logic signed [AW-1:0] up[R+1][C];  // up[r][c] leaves PE(r,c) upwards; up[R] is the zero fill

  for (genvar r = 0; r < R; r++) begin : g_in_skew
    logic [DW+1:0] skewed;
    delay_line #(.WIDTH(DW + 2), .DEPTH(r)) u_skew (
        .clk(clk), .rst(rst), .d({in_valid, in_first, in_data[r*DW +: DW]}), .q(skewed));
    assign a_v[r][0] = skewed[DW+1];
    assign a_f[r][0] = skewed[DW];
    assign a[r][0] = skewed[DW-1:0];
  end

  for (genvar c = 0; c < C; c++) begin : g_w_skew
    delay_line #(.WIDTH(DW), .DEPTH(c)) u_skew (
        .clk(clk), .rst(rst), .d(w_data[c*DW +: DW]), .q(b[0][c]));
    assign up[R][c] = '0;
  end

  for (genvar r = 0; r < R; r++) begin : g_row
    for (genvar c = 0; c < C; c++) begin : g_col
      logic acc_valid;
      logic signed [AW-1:0] acc;
      pe_os #(.DW(DW), .AW(AW)) pe (
          .clk(clk), .rst(rst),
          .a_valid_in(a_v[r][c]), .a_first_in(a_f[r][c]), .a_in(a[r][c]),
          .a_valid_out(a_v[r][c+1]), .a_first_out(a_f[r][c+1]), .a_out(a[r][c+1]),
          .b_in(b[r][c]), .b_out(b[r+1][c]),
          .cap(cap), .shift(shift), .up_in(up[r+1][c]), .up_out(up[r][c]),
          .acc_valid(acc_valid), .acc(acc));
      assign pe_a_valid[r*C + c] = a_v[r][c];
      assign pe_a[(r*C + c)*DW +: DW] = a[r][c];
      assign pe_w[(r*C + c)*DW +: DW] = b[r][c];
      assign pe_ps_valid[r*C + c] = acc_valid;
      assign pe_ps[(r*C + c)*AW +: AW] = acc;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      out_valid <= 1'b0;
      out_data <= '0;
    end else begin
      out_valid <= cap || shift;
      for (int c = 0; c < C; c++) out_data[c*AW +: AW] <= up[0][c];
    end
  end
endmodule
