#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Creates the spinlane node pool from deploy/aks/nodepool.json with `az rest` on a pinned
# preview API version (secondaryNetworkInterfaces and dranet are preview fields), after
# putting your subscription, resource group, VNet and subnets into the body. Run from
# the source tree's root (docs/install-aks.md, section 2).
set -euo pipefail
SUB=${SUB:-$(az account show --query id -o tsv)}
RG=${RG:?resource group of the cluster}
CLUSTER=${CLUSTER:?cluster name}
VNET_RG=${VNET_RG:-$RG}
VNET=${VNET:?the cluster's VNet}
NODE_SUBNET=${NODE_SUBNET:?the pool's (primary NIC's) subnet}
DPDK_SUBNET=${DPDK_SUBNET:?the DPDK NIC's subnet, same VNet}
POOL=${POOL:-spinlane}
API=2026-06-02-preview

# Microsoft's multi-NIC node pool prerequisites ("Configure Multi-NIC pods using AKS
# supported DRANET (Preview)"): Kubernetes 1.35 or later and the preview feature
# NetworkingMultiNICPreview registered on the subscription.
state=$(az feature show --namespace Microsoft.ContainerService --name NetworkingMultiNICPreview \
  --query properties.state -o tsv 2>/dev/null || true)
if [ "$state" != Registered ]; then
  echo "create-nodepool: the preview feature NetworkingMultiNICPreview is '${state:-not registered}':" >&2
  echo "  az feature register --namespace Microsoft.ContainerService --name NetworkingMultiNICPreview" >&2
  echo "  (wait until az feature show ... reports Registered), then az provider register --namespace Microsoft.ContainerService" >&2
  exit 1
fi
ver=$(az aks show -g "$RG" -n "$CLUSTER" --query currentKubernetesVersion -o tsv)
if [ "$(printf '%s\n' 1.35 "$ver" | sort -V | head -n1)" != 1.35 ]; then
  echo "create-nodepool: the cluster runs Kubernetes $ver; secondary network interfaces need 1.35 or later" >&2
  exit 1
fi

net="/subscriptions/$SUB/resourceGroups/$VNET_RG/providers/Microsoft.Network/virtualNetworks/$VNET/subnets"
body=$(mktemp)
jq --arg n "$net/$NODE_SUBNET" --arg d "$net/$DPDK_SUBNET" \
  '.properties.vnetSubnetID = $n | .properties.networkProfile.secondaryNetworkInterfaces[0].vnetSubnetId = $d' \
  deploy/aks/nodepool.json >"$body"
az rest --method put \
  --url "https://management.azure.com/subscriptions/$SUB/resourceGroups/$RG/providers/Microsoft.ContainerService/managedClusters/$CLUSTER/agentPools/$POOL?api-version=$API" \
  --body "@$body"
rm -f "$body"
az aks nodepool wait -g "$RG" --cluster-name "$CLUSTER" -n "$POOL" --created
