using Tunnel2.Hosting;
using Tunnel2.TunnelClient;
using Tunnel2.TunnelClient.Configuration;

return await ProgramHost.RunAsync("TunnelClient", args, CommandLine.HelpText, CommandLine.Spec, TunnelClientApp.Create);
