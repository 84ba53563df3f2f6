#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The aws CLI equivalent of `eksctl create nodegroup -f deploy/eks/cluster.yaml`: the
# launch template from launch-template.json with user-data.mime as its user data, then
# the managed node group. Set the variables below; run from the source tree's root.
set -euo pipefail
CLUSTER=${CLUSTER:-my-cluster}
REGION=${REGION:-us-east-1}
SUBNETS=${SUBNETS:?private subnet ids, space separated}
NODE_ROLE_ARN=${NODE_ROLE_ARN:?the node IAM role (with ec2:CreateTags on network-interface)}

# GRAVITON=1: the arm64 variant (c7gn.4xlarge, AMI type AL2023_ARM_64_STANDARD)
if [ "${GRAVITON:-0}" = 1 ]; then
  LT_FILE=deploy/eks/launch-template-graviton.json UD_FILE=deploy/eks/user-data-graviton.mime
  AMI_TYPE=AL2023_ARM_64_STANDARD CORES=14
else
  LT_FILE=deploy/eks/launch-template.json UD_FILE=deploy/eks/user-data.mime
  AMI_TYPE=AL2023_x86_64_STANDARD CORES=7
fi
# The launch template's interfaces carry security groups, so EKS adds no cluster security
# group of its own: the cluster's is put on both, or the nodes cannot join (EKS user guide,
# "Customize managed nodes with launch templates"). EXTRA_SGS: more groups, space separated.
CLUSTER_SG=$(aws eks describe-cluster --region "$REGION" --name "$CLUSTER" \
  --query cluster.resourcesVpcConfig.clusterSecurityGroupId --output text)
lt=$(mktemp)
# shellcheck disable=SC2086
jq --arg ud "$(base64 -w0 "$UD_FILE")" --arg sg "$CLUSTER_SG" --arg extra "${EXTRA_SGS:-}" \
  '.UserData = $ud | .NetworkInterfaces[].Groups |= (map(if . == "CLUSTER_SECURITY_GROUP" then $sg else . end) + ($extra | split(" ") | map(select(. != ""))))' \
  "$LT_FILE" >"$lt"
LT_ID=$(aws ec2 create-launch-template --region "$REGION" --launch-template-name "$CLUSTER-spinlane" \
  --launch-template-data "file://$lt" --query LaunchTemplate.LaunchTemplateId --output text)
rm -f "$lt"

# shellcheck disable=SC2086
aws eks create-nodegroup --region "$REGION" --cluster-name "$CLUSTER" --nodegroup-name spinlane \
  --subnets $SUBNETS --node-role "$NODE_ROLE_ARN" \
  --launch-template "id=$LT_ID,version=1" --ami-type "$AMI_TYPE" \
  --scaling-config minSize=0,maxSize=4,desiredSize=2 \
  --update-config maxUnavailable=1 \
  --labels spinlane.io/node-pool=true \
  --taints key=spinlane.io/dedicated,value=true,effect=NO_SCHEDULE
aws eks wait nodegroup-active --region "$REGION" --cluster-name "$CLUSTER" --nodegroup-name spinlane
# Scale from zero: the Cluster Autoscaler's node template, as tags on the group's ASG
# (a managed node group does not copy its labels, taints or resources there itself).
ASG=$(aws eks describe-nodegroup --region "$REGION" --cluster-name "$CLUSTER" --nodegroup-name spinlane \
  --query 'nodegroup.resources.autoScalingGroups[0].name' --output text)
t=k8s.io/cluster-autoscaler/node-template
aws autoscaling create-or-update-tags --region "$REGION" --tags \
  "ResourceId=$ASG,ResourceType=auto-scaling-group,Key=$t/label/spinlane.io/node-pool,Value=true,PropagateAtLaunch=false" \
  "ResourceId=$ASG,ResourceType=auto-scaling-group,Key=$t/taint/spinlane.io/dedicated,Value=true:NoSchedule,PropagateAtLaunch=false" \
  "ResourceId=$ASG,ResourceType=auto-scaling-group,Key=$t/resources/spinlane.io/dpdk-nic,Value=1,PropagateAtLaunch=false" \
  "ResourceId=$ASG,ResourceType=auto-scaling-group,Key=$t/resources/spinlane.io/isolated-core,Value=$CORES,PropagateAtLaunch=false" \
  "ResourceId=$ASG,ResourceType=auto-scaling-group,Key=$t/resources/hugepages-2Mi,Value=2Gi,PropagateAtLaunch=false"
