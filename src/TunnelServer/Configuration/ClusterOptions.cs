using System.ComponentModel.DataAnnotations;

namespace Tunnel2.TunnelServer.Configuration;

/// <summary>This server as one node of several behind a balancer (section <c>TunnelServer:Cluster</c>).</summary>
public sealed class ClusterOptions
{
    /// <summary>
    /// This node's name among several servers behind one balancer: in its logs (the <c>Node</c> property), its metrics
    /// (<c>service.instance.id</c>) and, with the node header, a response header. Null: the machine's name.
    /// </summary>
    [RegularExpression("^[A-Za-z0-9._:-]{1,64}$", ErrorMessage = "TunnelServer:Cluster:NodeName must be 1 to 64 characters of A-Z a-z 0-9 . _ : -.")]
    public string? NodeName { get; set; }

    /// <summary>Send <c>Tunnel2-Node: &lt;NodeName&gt;</c> on every public response (to see which node answered).</summary>
    public bool NodeHeader { get; set; }

    /// <summary>The node name, or the machine's name when none is set.</summary>
    public string ResolvedNodeName => string.IsNullOrWhiteSpace(NodeName) ? Environment.MachineName : NodeName;
}
