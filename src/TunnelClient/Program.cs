using Tunnel2.Hosting;
using Tunnel2.TunnelClient;
using Tunnel2.TunnelClient.Configuration;

// "tunnel2 http 8080 …" is the short form of "--backend http://127.0.0.1:8080 --session <new id> …".
string[] expanded = QuickStart.Expand(args, sessionFromEnvironment: !string.IsNullOrEmpty(Environment.GetEnvironmentVariable("TunnelClient__Session")));
return await ProgramHost.RunAsync("TunnelClient", expanded, CommandLine.Help, CommandLine.Spec, TunnelClientApp.Create);
