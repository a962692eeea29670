using System.Xml.Linq;
using Microsoft.AspNetCore.DataProtection.Repositories;

namespace Tunnel2.YarpHop;

/// <summary>A data-protection key ring that lives as long as the process: a measurement hop protects nothing.</summary>
internal sealed class InMemoryKeyRing : IXmlRepository
{
    private readonly List<XElement> _keys = [];

    public IReadOnlyCollection<XElement> GetAllElements()
    {
        lock (_keys)
        {
            return [.. _keys];
        }
    }

    public void StoreElement(XElement element, string friendlyName)
    {
        lock (_keys)
        {
            _keys.Add(element);
        }
    }
}
