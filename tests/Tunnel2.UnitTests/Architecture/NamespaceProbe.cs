// Two namespaces for NamespaceCycleTests.The_graph_sees_an_import_made_only_inside_a_method_body: Above names Below
// only inside a method body.
namespace Tunnel2.UnitTests.Architecture.Probe.Below
{
    internal static class Leaf
    {
        public static int Value() => 42;
    }
}

namespace Tunnel2.UnitTests.Architecture.Probe.Above
{
    internal static class Caller
    {
        public static int Call() => Tunnel2.UnitTests.Architecture.Probe.Below.Leaf.Value() + 1;
    }
}
