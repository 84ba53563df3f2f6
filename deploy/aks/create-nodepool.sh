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
