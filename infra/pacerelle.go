package main

// Pacerelle's doorbell on AWS: an API Gateway WebSocket API whose routes
// are the doorbell function's, and the grant that lets the functions
// that push rings (awsenv.Function.Pushes) POST to its @connections.

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
)

// PacerelleStage is the WebSocket API's one stage.
const PacerelleStage = "prod"

// PushActions are the pushing functions' only actions on the WebSocket
// API: a ring is a POST to @connections/{id}.
var PushActions = []string{"execute-api:ManageConnections"}

// wirePacerelle defines the WebSocket API. $connect is authorised by its
// integration (the doorbell function checks the token or the device
// credential itself and answers 401/403), not by a Lambda authorizer: the
// check needs the table, and a refusal rejects the handshake all the same.
// $default is a two-way route: its answer (the inbox head) is the pong of
// the client's heartbeat. The connection limits are API Gateway's (2 h,
// 10 min idle): the clients ping and reconnect before them (relayclient.Client).
func (s *CustomerStack) wirePacerelle(p *CustomerProps) {
	stack := s.Stack
	fn := s.Functions[awsenv.FuncDoorbell]
	integration := func(route string) awsapigatewayv2.WebSocketRouteIntegration {
		return awsapigatewayv2integrations.NewWebSocketLambdaIntegration(jsii.String("Doorbell"+route+"Integration"), fn, nil)
	}
	s.WebSocket = awsapigatewayv2.NewWebSocketApi(stack, jsii.String("PacerelleWebSocket"), &awsapigatewayv2.WebSocketApiProps{
		ApiName:                jsii.String("vp-" + p.Customer + "-pacerelle"),
		Description:            jsii.String("VantagePeers " + p.Customer + ": Pacerelle doorbells (WebSocket; {\"seq\":N} rings only, data over HTTPS)"),
		ConnectRouteOptions:    &awsapigatewayv2.WebSocketRouteOptions{Integration: integration("Connect")},
		DisconnectRouteOptions: &awsapigatewayv2.WebSocketRouteOptions{Integration: integration("Disconnect")},
		DefaultRouteOptions:    &awsapigatewayv2.WebSocketRouteOptions{Integration: integration("Default"), ReturnResponse: jsii.Bool(true)},
	})
	s.WebSocketStage = awsapigatewayv2.NewWebSocketStage(stack, jsii.String("PacerelleStage"), &awsapigatewayv2.WebSocketStageProps{
		WebSocketApi: s.WebSocket,
		StageName:    jsii.String(PacerelleStage),
		AutoDeploy:   jsii.Bool(true),
		// A ring per send and a ping a minute per client are far under it;
		// the cap bounds what a runaway client costs.
		Throttle: &awsapigatewayv2.ThrottleSettings{RateLimit: jsii.Number(200), BurstLimit: jsii.Number(400)},
	})
	// Exactly this API's stage, POST on @connections: no other API, no
	// GET or DELETE of a connection.
	connections := fmt.Sprintf("arn:%s:execute-api:%s:%s:%s/%s/POST/@connections/*",
		*stack.Partition(), *stack.Region(), *stack.Account(), *s.WebSocket.ApiId(), PacerelleStage)
	for _, f := range awsenv.Functions() {
		if !f.Pushes {
			continue
		}
		pusher := s.Functions[f.Name]
		pusher.AddEnvironment(jsii.String(awsenv.EnvPacerelleConnections), s.WebSocketStage.CallbackUrl(), nil)
		pusher.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid: jsii.String("PacerellePush"), Actions: jsii.Strings(PushActions...), Resources: jsii.Strings(connections),
		}))
	}
	awscdk.NewCfnOutput(stack, jsii.String("PacerelleWebSocketUrl"), &awscdk.CfnOutputProps{
		Value:       s.WebSocketStage.Url(),
		Description: jsii.String("Pacerelle doorbell (wss): the bridge's --ws-url / PACERELLE_WS_URL; its --base-url is the API's base URL"),
	})
}
