import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** An RFC 7517 public key (OKP/Ed25519 or EC/P-256). */
export class JwkDto {
  @ApiProperty({ enum: ['OKP', 'EC'] }) kty: string;
  @ApiProperty({ enum: ['Ed25519', 'P-256'] }) crv: string;
  @ApiProperty() x: string;
  @ApiPropertyOptional({ description: 'EC keys only.' }) y?: string;
  @ApiProperty({ description: 'RFC 7638 thumbprint; the `kid` of tokens it signed.' }) kid: string;
  @ApiProperty({ enum: ['EdDSA', 'ES256'] }) alg: string;
  @ApiProperty({ enum: ['sig'] }) use: string;
}

export class JwksDto {
  @ApiProperty({ type: [JwkDto] }) keys: JwkDto[];
}

/** RFC 8414 authorization server metadata. */
export class ServerMetadataDto {
  @ApiProperty({ example: 'http://localhost:3000' }) issuer: string;
  @ApiProperty() token_endpoint: string;
  @ApiProperty() jwks_uri: string;
  @ApiProperty() revocation_endpoint: string;
  @ApiProperty() introspection_endpoint: string;
  @ApiProperty({ type: [String] }) scopes_supported: string[];
  @ApiProperty({ type: [String], description: 'Empty: no authorization endpoint.' })
  response_types_supported: string[];
  @ApiProperty({ type: [String] }) grant_types_supported: string[];
  @ApiProperty({ type: [String] }) token_endpoint_auth_methods_supported: string[];
  @ApiProperty({ type: [String] }) revocation_endpoint_auth_methods_supported: string[];
  @ApiProperty({ type: [String] }) introspection_endpoint_auth_methods_supported: string[];
}
