// The instruction set arrives with the ISA issue; this file keeps the target linkable.
namespace tpusim::isa {
int placeholder() { return 0; }
}  // namespace tpusim::isa
