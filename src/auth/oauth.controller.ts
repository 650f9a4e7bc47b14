import { Body, Controller, Header, HttpCode, Ip, Post, UseInterceptors } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConsumes,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { RawResponse } from '../common/decorators/raw-response.decorator.js';
import { ClientsService } from './clients.service.js';
import { AuthorizationHeaders } from './decorators/authorization-headers.decorator.js';
import { IntrospectionResponseDto } from './dto/introspection-response.dto.js';
import { OAuthErrorDto, TooManyRequestsDto } from './dto/oauth-error.dto.js';
import { TokenOperationRequestDto } from './dto/token-operation-request.dto.js';
import { InvalidRequestException } from './oauth.exceptions.js';
import { TokenRequestDto } from './dto/token-request.dto.js';
import { ThrottledByAddress } from './guards/address-throttle.guard.js';
import { TokenResponseDto } from './dto/token-response.dto.js';
import { readClientCredentials } from './oauth-request.js';
import { RevocationService } from './revocation.service.js';
import { TokenGrantService } from './token-grant.service.js';
import { TokenMetricsInterceptor } from './token-metrics.interceptor.js';
import { TokenVerifier } from './token-verifier.service.js';

const CONSUMES = ['application/json', 'application/x-www-form-urlencoded'];
const INVALID_REQUEST =
  'invalid_request (a parameter missing or repeated, two Authorization headers, client ' +
  'credentials both in HTTP Basic and in the body, a `__proto__` key, a body neither JSON nor a form, ' +
  'a request without Host)';
// Either client_secret_basic or client_secret_post (the body), hence the empty alternative.
const CLIENT_AUTH: { security: Record<string, string[]>[] } = {
  security: [{ client_basic: [] }, {}],
};

/**
 * RFC 6749 token endpoint, RFC 7009 revocation, RFC 7662 introspection. Answers are never cached
 * (RFC 6749 §5.1; errors get the same headers from the global filter). Bodies go through the
 * global pipe like every route's: their DTOs are read by RFC 6749's rules (@OAuthParameters()),
 * and a refusal is answered as 400 invalid_request (asOAuthError()). Every request counts against
 * its address (THROTTLE_TOKEN_PER_IP); failed client authentication against the client id from
 * that address.
 */
@ApiTags('oauth')
@RawResponse()
@Controller('oauth')
@ApiTooManyRequestsResponse({ type: TooManyRequestsDto, description: 'Throttled.' })
@ApiPayloadTooLargeResponse({
  type: OAuthErrorDto,
  description: 'invalid_request: body over 16 KiB.',
})
export class OAuthController {
  constructor(
    private readonly grants: TokenGrantService,
    private readonly clients: ClientsService,
    private readonly revocation: RevocationService,
    private readonly verifier: TokenVerifier,
  ) {}

  @Post('token')
  @ThrottledByAddress()
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Header('Pragma', 'no-cache')
  @ApiOperation({
    summary: 'Issue an access token (client_credentials or password grant).',
    ...CLIENT_AUTH,
  })
  @ApiConsumes(...CONSUMES)
  @ApiBody({ type: TokenRequestDto })
  @ApiOkResponse({ type: TokenResponseDto })
  @ApiBadRequestResponse({
    type: OAuthErrorDto,
    description: `${INVALID_REQUEST}, invalid_grant, unauthorized_client, unsupported_grant_type or invalid_scope.`,
  })
  @ApiUnauthorizedResponse({ type: OAuthErrorDto, description: 'invalid_client.' })
  @UseInterceptors(TokenMetricsInterceptor)
  async token(
    @AuthorizationHeaders() authorizations: string[],
    @Body() params: TokenRequestDto,
    @Ip() address: string,
  ): Promise<TokenResponseDto> {
    const { grant_type: grantType, scope, username, password } = params;
    return this.grants.grant(
      { grantType, scope, username, password },
      readClientCredentials(authorizations, params),
      address,
    );
  }

  @Post('revoke')
  @ThrottledByAddress()
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Header('Pragma', 'no-cache')
  @ApiOperation({
    summary: 'Revoke an access token of the calling client (RFC 7009).',
    description: 'Also 200 for a token that is unknown, malformed or already expired.',
    ...CLIENT_AUTH,
  })
  @ApiConsumes(...CONSUMES)
  @ApiBody({ type: TokenOperationRequestDto })
  @ApiOkResponse({
    description: 'Revoked: an empty JSON object, so that clients that insist on JSON work.',
    schema: { type: 'object', additionalProperties: false, maxProperties: 0 },
  })
  @ApiBadRequestResponse({
    type: OAuthErrorDto,
    description: `${INVALID_REQUEST}, or unauthorized_client for a token of another client.`,
  })
  @ApiUnauthorizedResponse({ type: OAuthErrorDto, description: 'invalid_client.' })
  async revoke(
    @AuthorizationHeaders() authorizations: string[],
    @Body() params: TokenOperationRequestDto,
    @Ip() address: string,
  ): Promise<Record<string, never>> {
    const client = await this.clients.authenticate(
      readClientCredentials(authorizations, params),
      address,
    );
    await this.revocation.revokeForClient(requiredToken(params), client.id);
    return {};
  }

  @Post('introspect')
  @ThrottledByAddress()
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Header('Pragma', 'no-cache')
  @ApiOperation({
    summary: 'Describe an access token (RFC 7662).',
    description: '`{"active": false}` for anything that is not currently a valid token.',
    ...CLIENT_AUTH,
  })
  @ApiConsumes(...CONSUMES)
  @ApiBody({ type: TokenOperationRequestDto })
  @ApiOkResponse({ type: IntrospectionResponseDto })
  @ApiBadRequestResponse({ type: OAuthErrorDto, description: `${INVALID_REQUEST}.` })
  @ApiUnauthorizedResponse({ type: OAuthErrorDto, description: 'invalid_client.' })
  async introspect(
    @AuthorizationHeaders() authorizations: string[],
    @Body() params: TokenOperationRequestDto,
    @Ip() address: string,
  ): Promise<IntrospectionResponseDto> {
    await this.clients.authenticate(readClientCredentials(authorizations, params), address);
    const active = await this.verifier.active(requiredToken(params));
    if (!active) return { active: false };
    const { scope, client_id, exp, iat, sub, aud, iss, jti } = active.claims;
    return { active: true, scope, client_id, token_type: 'Bearer', exp, iat, sub, aud, iss, jti };
  }
}

/** The token of a revocation or introspection, asked for once the client is authenticated. */
function requiredToken({ token }: TokenOperationRequestDto): string {
  if (token === undefined) throw new InvalidRequestException('The token parameter is required.');
  return token;
}
