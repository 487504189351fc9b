// A chain of DEPTH registers: `q` is `d` as it was DEPTH clock edges ago. DEPTH = 0 is a wire.
// The arrays use it for the skew that lines operands up with the diagonal wavefront: lane i of
// an edge is delayed by i cycles, so the item that enters at cycle t reaches PE(r,c) at t + r + c.
module delay_line #(
    parameter int WIDTH = 8,
    parameter int DEPTH = 1
) (
    // A zero-depth line is a wire and uses neither.
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic             clk,
    input  logic             rst,
    /* verilator lint_on UNUSEDSIGNAL */
    input  logic [WIDTH-1:0] d,
    output logic [WIDTH-1:0] q
);
  if (DEPTH == 0) begin : g_wire
    assign q = d;
  end else begin : g_regs
    logic [WIDTH-1:0] stage[DEPTH];
    always_ff @(posedge clk) begin
      // Reset clears the valid bits riding in the chain, so no stale item enters the array.
      if (rst) begin
        for (int i = 0; i < DEPTH; i++) stage[i] <= '0;
      end else begin
        stage[0] <= d;
        for (int i = 1; i < DEPTH; i++) stage[i] <= stage[i-1];
      end
    end
    assign q = stage[DEPTH-1];
  end
endmodule
